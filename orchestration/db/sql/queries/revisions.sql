-- name: changed_keys
-- Of the records :keys with content :hashes, the keys whose latest revision has another hash (or none).
-- One index probe per key on (source_record_key, id DESC). Only the records behind these keys are sent to be stored, so a
-- re-parse that changes nothing serialises and transfers no record at all.
SELECT i.source_record_key
  FROM unnest(CAST(:keys AS text[]), CAST(:hashes AS text[])) AS i(source_record_key, content_hash)
  LEFT JOIN LATERAL (
        SELECT r.content_hash FROM content.entity_revisions r
         WHERE r.source_record_key = i.source_record_key
         ORDER BY r.id DESC LIMIT 1) latest ON true
 WHERE latest.content_hash IS DISTINCT FROM i.content_hash

-- name: insert_revisions
-- Store the changed records of a chunk as revisions and bring their companies' summary columns up to date; returns the company ids.
WITH inserted AS (
    INSERT INTO content.entity_revisions
        (entity_id, source_record_key, content_hash, record, parser_version, raw_document_id, job_id)
    SELECT *
      FROM unnest(CAST(:entity_ids AS uuid[]), CAST(:keys AS text[]), CAST(:hashes AS text[]),
                  CAST(:records AS jsonb[]), CAST(:parser_versions AS text[]), CAST(:raw_document_ids AS uuid[]),
                  CAST(:job_ids AS uuid[]))
    RETURNING entity_id, record
),
summarised AS (
    UPDATE content.entities e
       SET name = ins.record ->> 'name',
           legal_form = ins.record #>> '{legal_form,code}',
           seat = ins.record ->> 'seat',
           court_name = coalesce(ins.record #>> '{register,court_name}', e.court_name),
           updated_at = now()
      FROM inserted ins
     WHERE e.id = ins.entity_id
    RETURNING e.id
)
SELECT ins.entity_id::text FROM inserted ins
