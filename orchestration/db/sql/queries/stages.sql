-- name: upsert_entity
-- Record a result row as a company, or bring a known company up to date with it; returns the company's id.
INSERT INTO content.entities
    (court_code, court_name, register_type, register_number, register_suffix, name, seat,
     register_status, documents_offered, earlier_names, discovered_by_search_id)
VALUES (:court_code, :court_name, :register_type, :register_number, :register_suffix, :name, :seat,
        :register_status, :documents_offered, CAST(:earlier_names AS jsonb), :search_id)
ON CONFLICT ON CONSTRAINT entities_register_key DO UPDATE
   SET name = EXCLUDED.name, seat = EXCLUDED.seat, register_status = EXCLUDED.register_status,
       documents_offered = EXCLUDED.documents_offered, earlier_names = EXCLUDED.earlier_names,
       updated_at = now()
RETURNING id

-- name: record_search_results
-- What search :search_id found, the companies :entity_ids in the register's order.
-- Kept in order so that `hreg search show` lists them as found.
INSERT INTO public.search_results (search_id, position, entity_id)
SELECT :search_id, r.position, r.entity_id
  FROM unnest(CAST(:entity_ids AS uuid[])) WITH ORDINALITY AS r(entity_id, position)
ON CONFLICT (search_id, position) DO UPDATE SET entity_id = EXCLUDED.entity_id

-- name: current_si
-- A company's current SI document, and whether it was retrieved less than :fresh_s seconds ago.
SELECT d.id, d.retrieved_at > now() - make_interval(secs => :fresh_s) AS fresh
  FROM content.entities e JOIN content.raw_documents d ON d.id = e.current_si_document_id
 WHERE e.id = :entity_id

-- name: attach_si
-- Make :document_id the company's current SI document and the company xml_ready (its trigger queues the parse).
-- The same bytes again are not new work, except for a company a person sent to discovery, who
-- waits for its record.
UPDATE content.entities
   SET current_si_document_id = :document_id, processing_status = 'xml_ready', updated_at = now()
 WHERE id = :entity_id
   AND (current_si_document_id IS DISTINCT FROM :document_id OR processing_status = 'basic_discovery_running')

-- name: update_from_row
-- Bring a company up to date with what its result row says.
UPDATE content.entities
   SET name = :name, seat = :seat, register_status = :register_status, documents_offered = :documents_offered,
       earlier_names = CAST(:earlier_names AS jsonb), updated_at = now()
 WHERE id = :entity_id

-- name: entity_key
-- The register key and name of company :entity_id.
SELECT id, court_code, register_type, register_number, register_suffix, name
  FROM content.entities WHERE id = :entity_id

-- name: current_capital
-- The capital amount in the newest record of company :entity_id.
SELECT record #>> '{capital,amount}' FROM content.entity_revisions
 WHERE entity_id = :entity_id ORDER BY id DESC LIMIT 1

-- name: fresh_download
-- The document the newest :job_type job of company :entity_id retrieved from the register, if it completed less than :fresh_s seconds ago.
-- Asked of the job that retrieved it, not of the document's retrieved_at: the same bytes
-- retrieved again keep their first row and its time. A job that reused a fresh document
-- retrieved nothing, so reuses never stretch the window. Archived jobs (days old) are past it.
SELECT CAST(j.result ->> 'raw_document_id' AS uuid) AS id
  FROM processing.processing_jobs j
 WHERE j.entity_id = :entity_id AND j.type = :job_type AND j.status = 'completed'
   AND CAST(j.result ->> 'retrieved' AS boolean)
   AND j.completed_at > now() - make_interval(secs => :fresh_s)
 ORDER BY j.completed_at DESC
 LIMIT 1
