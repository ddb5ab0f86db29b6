-- name: run_by_court
-- What run :run_id did to :job_type jobs per court: jobs completed and failed by failure class, and how many wrote something new (result flag :written).
-- What one run did per register court, from the step history (which carries the run id, so only
-- the run's own rows are read): the jobs it completed, how many of those wrote something new (the
-- true result flag ``:written``), and its failed attempts by failure class.
SELECT left(e.court_code, 5) AS court, h.status, coalesce(h.error_type, 'unclassified') AS failure_class,
       count(*) AS jobs,
       count(*) FILTER (WHERE h.status = 'completed' AND (j.result ->> :written)::boolean) AS written
  FROM processing.job_step_history h
  JOIN processing.processing_jobs j ON j.id = h.job_id
  JOIN content.entities e ON e.id = j.entity_id
 WHERE h.dagster_run_id = :run_id AND h.step_type = :job_type AND h.status IN ('completed', 'failed')
 GROUP BY 1, 2, 3
