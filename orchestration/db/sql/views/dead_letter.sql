-- dead_letter: jobs that failed for good (seeds/002's dead-letter destination), permanently
-- (a class processing.failure_classes marks permanent) or after their last retry, and that no
-- later job took up (a manual retry, or a re-parse, points at them with previous_job_id).
-- `hreg jobs dead-letter` lists them; `hreg jobs retry` queues a manual job that takes one up.
CREATE OR REPLACE VIEW processing.dead_letter AS
SELECT j.id,
       j.type,
       j.failure_class,
       coalesce(fc.permanent, false) AS permanent,
       j.retry_count + 1 AS attempts,
       j.result #>> '{error,message}' AS last_error,
       j.result #>> '{error,source}' AS error_source,
       j.result #>> '{error,code}' AS error_code,
       j.search_id,
       j.entity_id,
       j.raw_document_id,
       j.parser_version,
       j.trigger,
       j.requested_by,
       j.completed_at AS failed_at
  FROM processing.processing_jobs j
  LEFT JOIN processing.failure_classes fc ON fc.failure_class = j.failure_class
 WHERE j.status = 'failed'
   AND NOT EXISTS (SELECT 1 FROM processing.processing_jobs later WHERE later.previous_job_id = j.id);

GRANT SELECT ON processing.dead_letter TO hreg_app, hreg_worker;
