-- name: entity_by_id
-- A company's row, with the time its current SI document was retrieved.
SELECT e.*, d.retrieved_at AS si_retrieved_at
  FROM content.entities e LEFT JOIN content.raw_documents d ON d.id = e.current_si_document_id
 WHERE e.id = :entity_id

-- name: entities_by_register
-- The ids of the companies at :court (its code, or its name as the result table shows it) with :register_type and :register_number, and :suffix when given.
SELECT e.id
  FROM content.entities e
 WHERE (e.court_code = :court OR lower(e.court_name) = lower(:court))
   AND e.register_type = :register_type AND e.register_number = :register_number
   AND (CAST(:suffix AS text) IS NULL OR e.register_suffix = :suffix)
 ORDER BY e.register_suffix

-- name: revisions
-- A company's revisions, newest first, each with the document it was parsed from.
SELECT r.id, r.created_at, r.parser_version, r.content_hash, r.record, d.retrieved_at, d.filename
  FROM content.entity_revisions r LEFT JOIN content.raw_documents d ON d.id = r.raw_document_id
 WHERE r.entity_id = :entity_id
 ORDER BY r.id DESC

-- name: current_shareholder_list
-- A company's newest shareholder list.
SELECT id, created_at, method, source, ocr_fallback, valid, validation, total_nominal, currency, capital
  FROM content.shareholder_lists WHERE entity_id = :entity_id ORDER BY id DESC LIMIT 1

-- name: shareholders
-- The shareholders of list :list_id in the list's order.
SELECT position, kind, name, seat, register_court, register_type, register_number, nominal_total, percentage,
       percentage_below_one
  FROM content.shareholders WHERE list_id = :list_id ORDER BY position

-- name: active_discovery
-- A company's basic_discovery job while it is queued or running.
SELECT id, status, priority FROM processing.processing_jobs
 WHERE type = 'basic_discovery' AND entity_id = :entity_id AND status IN ('queued', 'running')

-- name: open_entity
-- Open a company: its register data is fetched as a job of :priority (interactive when a person opens it); returns the job's id.
SELECT processing.open_entity(CAST(:entity_id AS uuid), CAST(:priority AS processing.job_priority),
                              CAST(:requested_by AS uuid), :reason)

-- name: request_shareholder_research
-- Ask for a company's shareholders as :priority work; returns the download job's id.
SELECT processing.request_shareholder_research(:entity_id, :requested_by, CAST(:priority AS processing.job_priority))

-- name: request_rediscovery
-- Queue a background re-check of a company's register data; returns the job's id, if one was queued.
SELECT automation.request_rediscovery(:entity_id, :requested_by, :reason)

-- name: request_printout
-- Ask for a company's current printout (AD) as :priority work; returns the job's id.
SELECT processing.request_printout(:entity_id, :requested_by, CAST(:priority AS processing.job_priority))

-- name: stored_documents
-- The documents stored of a company, newest first: what kind, when retrieved, how large.
SELECT id, kind, media_type, filename, size_bytes, retrieved_at
  FROM content.raw_documents WHERE entity_id = :entity_id
 ORDER BY retrieved_at DESC, kind
