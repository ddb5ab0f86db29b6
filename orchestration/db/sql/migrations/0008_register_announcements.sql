-- Register announcements (Registerbekanntmachungen) as an event source of the monitoring rules
-- (orchestration/automation/announcements.py): the announcements read, matched to the companies
-- we know, and which results pages (one per court and ended day) have been read.

CREATE TABLE content.register_announcements (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portal_id        text NOT NULL UNIQUE,  -- the portal's id of the announcement
    published        date NOT NULL,
    category         text NOT NULL,
    category_code    text CHECK (category_code IN ('1', '2', '3', '4', '5')),
    court_code       text NOT NULL,
    register_type    text,
    register_number  text,
    register_suffix  text,
    name             text NOT NULL,
    seat             text,
    entity_id        uuid REFERENCES content.entities (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    created_xid      xid8 NOT NULL DEFAULT pg_current_xact_id()
);
-- The event stream reads announcements about known companies in transaction order.
CREATE INDEX register_announcements_created_xid_idx ON content.register_announcements (created_xid, id)
    WHERE entity_id IS NOT NULL;
CREATE INDEX register_announcements_entity_idx ON content.register_announcements (entity_id, published DESC);

CREATE TABLE content.announcement_polls (
    court_code  text NOT NULL,
    day         date NOT NULL,
    found       integer NOT NULL CHECK (found >= 0),
    polled_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (court_code, day)
);

GRANT SELECT ON content.register_announcements, content.announcement_polls TO hreg_app;
GRANT SELECT, INSERT ON content.register_announcements, content.announcement_polls TO hreg_worker;

-- The new source type, whose name is longer than the columns allowed.
ALTER TABLE automation.trigger_rule
    ALTER COLUMN source_type TYPE varchar(40),
    DROP CONSTRAINT trigger_rule_source_type_check,
    ADD CONSTRAINT trigger_rule_source_type_check CHECK (source_type IN (
        'entity_changed', 'search_match', 'job_failed', 'announcement_for_watched_company', 'schedule'));
ALTER TABLE automation.trigger_log ALTER COLUMN trigger_on TYPE varchar(40);
