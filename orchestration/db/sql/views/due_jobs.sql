-- due_jobs: the queued jobs a worker may claim now, the stage gate of seeds/003. A queued job is
-- due when its backoff has passed and no earlier stage (processing.job_types.stage) of the same
-- entity is unfinished or failed without a later success (in the job table or the archive): a
-- failing step stops the later steps of that load, and they wait until it succeeds. A job without
-- an entity matches no earlier stage.
-- The claim, the sensors' poll and the count of due jobs all read this view, filtered by type and
-- ordered as they claim (orchestration/runtime/queue.py).
--
-- OFFSET 0 keeps the stage check a lookup per candidate in the entity index: without it the
-- planner may turn it into an anti-join that reads the whole job table on every claim.
-- The earlier job is tested as "not completed" rather than "queued or running" for the same
-- reason: a test on the active states lets the planner probe the partial indexes of all active
-- jobs instead, and with statistics taken while nothing was active it does, once per candidate
-- (a claim of 5000 among 20000 freshly queued re-parses took 50 s).
-- Only the job table is in the view's FROM, so a claim's FOR UPDATE locks the jobs and nothing else.
CREATE OR REPLACE VIEW processing.due_jobs AS
SELECT j.*
  FROM processing.processing_jobs j
 WHERE j.status = 'queued'
   AND j.next_attempt_at <= now()
   AND NOT EXISTS (
        SELECT 1
          FROM processing.processing_jobs e
         WHERE e.entity_id = j.entity_id
           AND e.type = ANY (ARRAY(SELECT et.type FROM processing.job_types et
                                    WHERE et.stage < (SELECT t.stage FROM processing.job_types t WHERE t.type = j.type)))
           AND e.status <> 'completed'
           AND (e.status <> 'failed' OR NOT (
                    EXISTS (SELECT 1 FROM processing.processing_jobs s
                             WHERE s.entity_id = e.entity_id AND s.type = e.type
                               AND s.status = 'completed' AND s.created_at > e.created_at)
                    -- The later success may have moved to the archive already.
                    OR EXISTS (SELECT 1 FROM processing.job_archive s
                                WHERE s.entity_id = e.entity_id AND s.type = e.type
                                  AND s.created_at > e.created_at)))
        OFFSET 0);

-- A claim reads it FOR UPDATE, which needs UPDATE on the view.
GRANT SELECT, UPDATE ON processing.due_jobs TO hreg_worker;
