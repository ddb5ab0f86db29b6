-- name: insert_search
-- Save a search as the application does; its trigger queues the basic_discovery job. Returns the search's id.
INSERT INTO public.searches (user_id, query, mode, register_type, court, include_deleted, result_pages)
VALUES (:user_id, :query, :mode, :register_type, :court, :include_deleted, :result_pages)
RETURNING id

-- name: job_of_search
-- The job that works search :search_id.
SELECT id FROM processing.processing_jobs WHERE search_id = :search_id

-- name: search
-- Search :search_id with the status, priority, total and error of its newest job.
SELECT s.id, s.query, s.mode, s.register_type, s.court, s.include_deleted, s.status, s.result_count,
       s.created_at, j.status AS job_status, j.priority, j.result ->> 'total_results' AS total_results,
       j.result #>> '{error,message}' AS error
  FROM public.searches s
  LEFT JOIN LATERAL (SELECT * FROM processing.processing_jobs j
                      WHERE j.search_id = s.id ORDER BY j.created_at DESC LIMIT 1) j ON true
 WHERE s.id = :search_id

-- name: results
-- The result rows of search :search_id in the portal's order, each with its company's status.
SELECT r.position, e.id, e.court_name, e.court_code, e.register_type, e.register_number, e.register_suffix,
       e.name, e.seat, e.register_status, e.processing_status, e.documents_offered
  FROM public.search_results r JOIN content.entities e ON e.id = r.entity_id
 WHERE r.search_id = :search_id
 ORDER BY r.position
