-- Undo 0008. Rules on announcements and their log go with it.
DELETE FROM automation.trigger_log WHERE trigger_on = 'announcement_for_watched_company';
DELETE FROM automation.trigger_rule WHERE source_type = 'announcement_for_watched_company';
ALTER TABLE automation.trigger_log ALTER COLUMN trigger_on TYPE varchar(20);
ALTER TABLE automation.trigger_rule
    DROP CONSTRAINT trigger_rule_source_type_check,
    ALTER COLUMN source_type TYPE varchar(30),
    ADD CONSTRAINT trigger_rule_source_type_check
        CHECK (source_type IN ('entity_changed', 'search_match', 'job_failed', 'schedule'));
DROP TABLE content.announcement_polls;
DROP TABLE content.register_announcements;
