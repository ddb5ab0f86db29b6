-- name: si_parsed_by_version
-- Part of the queries below: joins parsed.done, 1 when :parser_version has completed the current SI document of company e.
-- A lateral probe per company, not EXISTS: the planner turns [NOT] EXISTS into a join or a hashed
-- subplan that reads every job of the type, for each court asked about. The probe keeps a court's
-- query as small as the court, however many jobs the table holds.
LEFT JOIN LATERAL (
        SELECT 1 AS done FROM processing.completed_jobs done
         WHERE done.entity_id = e.id AND done.type = 'xml_parsing'
           AND done.raw_document_id = e.current_si_document_id AND done.parser_version = :parser_version
         LIMIT 1) parsed ON true

-- name: si_fingerprint
-- Part of the queries below: the fingerprint of the current SI documents of a court's companies e.
md5(string_agg(e.id::text || ':' || e.current_si_document_id::text, ',' ORDER BY e.id))

-- name: si_court_states
-- Per court of :courts: its companies whose current SI document :parser_version has not completed, the fingerprint of their documents and of their newest records.
SELECT left(e.court_code, 5) AS court,
       count(*) FILTER (WHERE parsed.done IS NULL) AS unfinished,
       {si_fingerprint} AS documents,
       md5(string_agg(e.id::text || ':' || coalesce(newest.content_hash, ''), ',' ORDER BY e.id)) AS records
  FROM content.entities e
  {si_parsed_by_version}
  LEFT JOIN LATERAL (
        SELECT r.content_hash FROM content.entity_revisions r
         WHERE r.entity_id = e.id ORDER BY r.id DESC LIMIT 1) newest ON true
 WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
 GROUP BY 1

-- name: si_document_fingerprints
-- Per court of :courts, the fingerprint of its companies' current SI documents (the data version of its raw_si_documents partition).
SELECT left(e.court_code, 5) AS court, {si_fingerprint} AS documents
  FROM content.entities e
 WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
 GROUP BY 1

-- name: newest_list
-- Part of the queries below: the newest stored shareholder list of company e.
SELECT d.id FROM content.raw_documents d
 WHERE d.entity_id = e.id AND d.kind = 'shareholder_list'
 ORDER BY d.retrieved_at DESC LIMIT 1

-- name: list_read_by_version
-- Part of the queries below: joins read.done, 1 when :parser_version has completed the newest list (list) of company e (a lateral probe, as si_parsed_by_version).
LEFT JOIN LATERAL (
        SELECT 1 AS done FROM processing.completed_jobs done
         WHERE done.entity_id = e.id AND done.type = 'shareholder_parsing'
           AND done.raw_document_id = list.id AND done.parser_version = :parser_version
         LIMIT 1) read ON true

-- name: list_fingerprint
-- Part of the queries below: the fingerprint of the newest lists (list) of a court's companies e.
md5(string_agg(e.id::text || ':' || list.id::text, ',' ORDER BY e.id))

-- name: shareholder_court_states
-- Per court of :courts: its companies whose newest shareholder list :parser_version has not read, the fingerprint of the lists and of the newest shareholder revisions.
SELECT left(e.court_code, 5) AS court,
       count(*) FILTER (WHERE read.done IS NULL) AS unfinished,
       {list_fingerprint} AS documents,
       md5(string_agg(e.id::text || ':' || coalesce(newest.content_hash, ''), ',' ORDER BY e.id)) AS records
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_list}) list
  {list_read_by_version}
  LEFT JOIN LATERAL (
        SELECT l.content_hash FROM content.shareholder_lists l
         WHERE l.entity_id = e.id ORDER BY l.id DESC LIMIT 1) newest ON true
 WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
 GROUP BY 1

-- name: shareholder_list_fingerprints
-- Per court of :courts, the fingerprint of its companies' newest shareholder lists (the data version of its shareholder_list_documents partition).
SELECT left(e.court_code, 5) AS court, {list_fingerprint} AS documents
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_list}) list
 WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
 GROUP BY 1

-- name: si_unfinished
-- The ids (text, in order) of the companies of :courts whose current SI document :parser_version has not completed.
-- What a backfill of these courts has left to do: the companies that keep them unsynced. A
-- document that failed, or that no job took, is in it; one this version has parsed is not, so
-- re-running a finished court finds nothing to do.
SELECT e.id::text
  FROM content.entities e
  {si_parsed_by_version}
 WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
   AND parsed.done IS NULL
 ORDER BY e.id

-- name: shareholder_unfinished
-- The ids (text, in order) of the companies of :courts whose newest shareholder list :parser_version has not completed.
SELECT e.id::text
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_list}) list
  {list_read_by_version}
 WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
   AND read.done IS NULL
 ORDER BY e.id

-- name: courts_of_entities
-- The register courts (without department letter) of the companies :entity_ids.
SELECT DISTINCT left(court_code, 5) FROM content.entities
 WHERE id = ANY(CAST(:entity_ids AS uuid[])) AND court_code IS NOT NULL
