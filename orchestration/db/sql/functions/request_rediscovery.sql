-- request_rediscovery: fresh register data for one company, the re-check of a monitoring rule:
-- background work, served after people's (processing.open_entity). Returns the active job, also
-- when one was already queued.
CREATE OR REPLACE FUNCTION automation.request_rediscovery(p_entity_id uuid, p_requested_by uuid DEFAULT NULL,
                                               p_reason text DEFAULT NULL)
RETURNS uuid
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
    SELECT processing.open_entity(p_entity_id, 'background', p_requested_by,
                                  coalesce(nullif(btrim(p_reason), ''), 'register data re-check requested'),
                                  'monitoring_rule');
$$;

REVOKE EXECUTE ON FUNCTION automation.request_rediscovery(uuid, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION automation.request_rediscovery(uuid, uuid, text) TO hreg_app, hreg_worker;
