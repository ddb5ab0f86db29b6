-- job_work_key: what a job works on, the key of processing_jobs.work_key (a stored generated
-- column) and of its unique index over active jobs: two active jobs with the same key would do
-- the same work twice. The one spelling of the key; queries that look for active work call it.
-- A job has a search or an entity (processing_jobs_has_subject), so the key always has a subject.
-- The column stores what this returns: a change of the expression needs a versioned migration
-- that recomputes the column (drop and add it), as 0006 did.
CREATE OR REPLACE FUNCTION processing.job_work_key(
    p_type text, p_raw_document_id uuid, p_entity_id uuid, p_search_id uuid, p_parser_version text)
RETURNS text
LANGUAGE sql IMMUTABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p_type || ':' || coalesce(p_raw_document_id::text, p_entity_id::text, p_search_id::text)
           || ':' || coalesce(p_parser_version, '')
$$;

REVOKE EXECUTE ON FUNCTION processing.job_work_key(text, uuid, uuid, uuid, text) FROM PUBLIC;
-- Workers insert jobs, which computes the column with the inserting role's privileges.
GRANT EXECUTE ON FUNCTION processing.job_work_key(text, uuid, uuid, uuid, text) TO hreg_worker;
