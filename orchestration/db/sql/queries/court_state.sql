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

-- name: si_failed_since
-- Part of the queries below: joins failed.class, the failure class of a job of :parser_version that failed for good on the current SI document of company e at or after :since (NULL: at any time).
LEFT JOIN LATERAL (
        SELECT f.failure_class AS class FROM processing.processing_jobs f
         WHERE f.entity_id = e.id AND f.type = 'xml_parsing' AND f.status = 'failed'
           AND f.raw_document_id = e.current_si_document_id AND f.parser_version = :parser_version
           AND f.created_at >= coalesce(CAST(:since AS timestamptz), '-infinity')
         ORDER BY f.created_at DESC
         LIMIT 1) failed ON true

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

-- name: list_failed_since
-- Part of the queries below: joins failed.class, the failure class of a job of :parser_version that failed for good on the newest list (list) of company e at or after :since (NULL: at any time).
LEFT JOIN LATERAL (
        SELECT f.failure_class AS class FROM processing.processing_jobs f
         WHERE f.entity_id = e.id AND f.type = 'shareholder_parsing' AND f.status = 'failed'
           AND f.raw_document_id = list.id AND f.parser_version = :parser_version
           AND f.created_at >= coalesce(CAST(:since AS timestamptz), '-infinity')
         ORDER BY f.created_at DESC
         LIMIT 1) failed ON true

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

-- name: newest_printout
-- Part of the query below: the newest stored printout (AD) of company e.
SELECT d.id FROM content.raw_documents d
 WHERE d.entity_id = e.id AND d.kind = 'printout'
 ORDER BY d.retrieved_at DESC LIMIT 1

-- name: printout_fingerprints
-- Per court of :courts, the fingerprint of its companies' newest printouts (the data version of its printouts partition).
SELECT left(e.court_code, 5) AS court,
       md5(string_agg(e.id::text || ':' || printout.id::text, ',' ORDER BY e.id)) AS documents
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_printout}) printout
 WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
 GROUP BY 1

-- name: si_unfinished
-- The ids (text, in order) of the companies of :courts (of those among :entity_ids, unless NULL) whose current SI document :parser_version has not completed, nor failed for good since :since.
-- What a backfill of these courts has left to do: the companies that keep them unsynced. A
-- document that no job took, or that failed before :since, is in it; one this version has
-- parsed is not, so re-running a finished court finds nothing to do, and a run asking again
-- before each batch skips what another run has parsed meanwhile. A failure since :since is
-- final for the run that asks (court_failures): it is not tried again.
SELECT e.id::text
  FROM content.entities e
  {si_parsed_by_version}
  {si_failed_since}
 WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
   AND (CAST(:entity_ids AS uuid[]) IS NULL OR e.id = ANY(CAST(:entity_ids AS uuid[])))
   AND parsed.done IS NULL AND failed.class IS NULL
 ORDER BY e.id

-- name: si_court_failures
-- Per court of :courts and failure class: the companies whose current SI document :parser_version has not completed and failed for good since :since.
SELECT left(e.court_code, 5) AS court, failed.class AS failure_class, count(*) AS companies
  FROM content.entities e
  {si_parsed_by_version}
  {si_failed_since}
 WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
   AND parsed.done IS NULL AND failed.class IS NOT NULL
 GROUP BY 1, 2

-- name: shareholder_unfinished
-- The ids (text, in order) of the companies of :courts (of those among :entity_ids, unless NULL) whose newest shareholder list :parser_version has not completed, nor failed for good since :since (as si_unfinished).
SELECT e.id::text
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_list}) list
  {list_read_by_version}
  {list_failed_since}
 WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
   AND (CAST(:entity_ids AS uuid[]) IS NULL OR e.id = ANY(CAST(:entity_ids AS uuid[])))
   AND read.done IS NULL AND failed.class IS NULL
 ORDER BY e.id

-- name: shareholder_court_failures
-- Per court of :courts and failure class: the companies whose newest shareholder list :parser_version has not completed and failed for good since :since.
SELECT left(e.court_code, 5) AS court, failed.class AS failure_class, count(*) AS companies
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_list}) list
  {list_read_by_version}
  {list_failed_since}
 WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
   AND read.done IS NULL AND failed.class IS NOT NULL
 GROUP BY 1, 2

-- name: courts_of_entities
-- The register courts (without department letter) of the companies :entity_ids.
SELECT DISTINCT left(court_code, 5) FROM content.entities
 WHERE id = ANY(CAST(:entity_ids AS uuid[])) AND court_code IS NOT NULL
