-- create_xml_parsing_job: an entity whose SI document is stored becomes a parse job.
CREATE OR REPLACE FUNCTION processing.create_xml_parsing_job() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    -- An update that leaves an entity in xml_ready (any other column) is not new work.
    IF TG_OP = 'UPDATE' AND OLD.processing_status = 'xml_ready'
       AND OLD.current_si_document_id IS NOT DISTINCT FROM NEW.current_si_document_id THEN
        RETURN NULL;
    END IF;
    -- The parse of a document that a person's discovery job fetched is that person's work too.
    INSERT INTO processing.processing_jobs (type, status, entity_id, raw_document_id, trigger, priority)
    VALUES ('xml_parsing', 'queued', NEW.id, NEW.current_si_document_id, 'upload',
            (SELECT d.priority FROM processing.processing_jobs d
              WHERE d.entity_id = NEW.id AND d.type = 'basic_discovery' AND d.status = 'running'
              ORDER BY d.priority LIMIT 1))
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER create_xml_parsing_job
    AFTER INSERT OR UPDATE ON content.entities
    FOR EACH ROW
    WHEN (NEW.processing_status = 'xml_ready')
    EXECUTE FUNCTION processing.create_xml_parsing_job();

REVOKE EXECUTE ON FUNCTION processing.create_xml_parsing_job() FROM PUBLIC;
