-- Monitoring rules (seeds/004 adapted): organizations and their users watch companies, and rules
-- say "when this happens, do that". As in the seed, trigger_log, scheduled_action and
-- scheduled_trigger_execution refer to trigger_rule logically, without foreign keys, so that the
-- history outlives a rule.

CREATE SCHEMA automation;

-- automation.trigger_rule -----------------------------------------------------------------------
CREATE TABLE automation.trigger_rule (
    id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name              varchar(255) NOT NULL CHECK (length(btrim(name)) > 0),
    source_type       varchar(30) NOT NULL
                      CHECK (source_type IN ('entity_changed', 'search_match', 'job_failed', 'schedule')),
    source_config     jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(source_config) = 'object'),
    action_type       varchar(30) NOT NULL CHECK (action_type IN ('enqueue_job', 'webhook', 'notification')),
    action_config     jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(action_config) = 'object'),
    enabled           boolean NOT NULL DEFAULT true,
    -- At most one firing per subject (company) in this window: always, once_per_hour, once_per_day, once (ever).
    frequency         varchar(20) NOT NULL DEFAULT 'once_per_hour'
                      CHECK (frequency IN ('always', 'once_per_hour', 'once_per_day', 'once')),
    -- After any firing the whole rule rests this long; a scheduled rule skips runs inside it.
    cooldown_seconds  integer CHECK (cooldown_seconds > 0),
    organization_id   uuid NOT NULL,
    created_by        uuid,
    updated_by        uuid,
    created_date      timestamptz(3) NOT NULL DEFAULT now(),
    updated_date      timestamptz(3),
    deleted_date      timestamptz(3)
);
CREATE INDEX idx_trigger_rule_organization ON automation.trigger_rule (organization_id);
CREATE INDEX idx_trigger_rule_deleted_date ON automation.trigger_rule (deleted_date);
-- Every evaluator tick reads the live rules of its source types.
CREATE INDEX idx_trigger_rule_live ON automation.trigger_rule (source_type) WHERE enabled AND deleted_date IS NULL;

-- automation.watch_list: the companies an organization watches (trigger_rule_id NULL), or the
-- companies one rule watches ------------------------------------------------------------------
CREATE TABLE automation.watch_list (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    organization_id  uuid NOT NULL,
    trigger_rule_id  integer REFERENCES automation.trigger_rule (id) ON DELETE CASCADE,
    entity_id        uuid NOT NULL REFERENCES content.entities (id) ON DELETE CASCADE,
    added_by         uuid,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT uq_watch_list UNIQUE NULLS NOT DISTINCT (organization_id, trigger_rule_id, entity_id)
);
-- Evaluators look up who watches the companies of a batch of events.
CREATE INDEX idx_watch_list_entity ON automation.watch_list (entity_id);
CREATE INDEX idx_watch_list_rule ON automation.watch_list (trigger_rule_id) WHERE trigger_rule_id IS NOT NULL;

-- automation.trigger_log: one row per firing, with its outcome -----------------------------------
CREATE TABLE automation.trigger_log (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    trigger_rule_id  integer NOT NULL,
    -- The event that fired the rule, e.g. 'revision:42'; a rule fires at most once per event.
    event_key        text NOT NULL,
    -- What the firing concerns and frequency counts per: the company, or for a failed search job the search.
    subject_id       uuid NOT NULL,
    trigger_on       varchar(20) NOT NULL,
    event            jsonb NOT NULL DEFAULT '{}'::jsonb,
    action_type      varchar(30) NOT NULL,
    action_config    jsonb,
    status           varchar(20) NOT NULL DEFAULT 'success'
                     CHECK (status IN ('success', 'failed', 'scheduled', 'expired', 'cancelled')),
    error_message    text,
    organization_id  uuid NOT NULL,
    created_date     timestamptz(3) NOT NULL DEFAULT now(),
    -- When a scheduled action settled the outcome.
    completed_date   timestamptz(3)
);
CREATE INDEX idx_trigger_log_rule_created ON automation.trigger_log (trigger_rule_id, created_date DESC);
CREATE UNIQUE INDEX uq_trigger_log_event ON automation.trigger_log (trigger_rule_id, event_key);
-- The frequency check: the latest firing of a rule for one subject.
CREATE INDEX idx_trigger_log_subject ON automation.trigger_log (trigger_rule_id, subject_id, created_date DESC);

-- automation.scheduled_action: actions that run later (delayed, webhooks, retries) ---------------
CREATE TABLE automation.scheduled_action (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    trigger_rule_id  integer,
    -- The firing whose outcome this action settles.
    trigger_log_id   bigint,
    subject_id       uuid NOT NULL,
    organization_id  uuid NOT NULL,
    action_type      varchar(30) NOT NULL CHECK (action_type IN ('enqueue_job', 'webhook', 'notification')),
    action_config    jsonb NOT NULL,
    source_config    jsonb,
    event            jsonb NOT NULL DEFAULT '{}'::jsonb,
    execute_at       timestamptz NOT NULL,
    expires_at       timestamptz,
    status           varchar(20) NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'expired', 'cancelled')),
    retry_count      integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
    max_retries      integer NOT NULL DEFAULT 0 CHECK (max_retries >= 0),
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    executed_at      timestamptz
);
CREATE INDEX idx_scheduled_action_pending ON automation.scheduled_action (execute_at) WHERE status = 'pending';
CREATE INDEX idx_scheduled_action_processing ON automation.scheduled_action (updated_at) WHERE status = 'processing';
CREATE INDEX idx_scheduled_action_subject ON automation.scheduled_action (subject_id, trigger_rule_id);

-- automation.scheduled_trigger_execution: one row per scheduled run of a rule --------------------
CREATE TABLE automation.scheduled_trigger_execution (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    trigger_rule_id     integer NOT NULL,
    scheduled_at        timestamptz NOT NULL,
    started_at          timestamptz NOT NULL DEFAULT now(),
    completed_at        timestamptz,
    status              varchar(20) NOT NULL DEFAULT 'processing'
                        CHECK (status IN ('processing', 'completed', 'failed', 'skipped')),
    -- Watched companies in the run; processed fired without error, failed fired with an error,
    -- the rest were held back by the rule's frequency.
    total_entities      integer NOT NULL DEFAULT 0,
    processed_entities  integer NOT NULL DEFAULT 0,
    failed_entities     integer NOT NULL DEFAULT 0,
    error_message       text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    -- Whoever inserts this row first runs it; a second evaluator's insert does nothing.
    CONSTRAINT uq_scheduled_trigger_execution UNIQUE (trigger_rule_id, scheduled_at)
);

-- automation.notifications: what the application shows its users -------------------------------
CREATE TABLE automation.notifications (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    organization_id  uuid NOT NULL,
    -- NULL: everyone in the organization.
    user_id          uuid,
    trigger_rule_id  integer,
    trigger_log_id   bigint,
    entity_id        uuid REFERENCES content.entities (id) ON DELETE CASCADE,
    title            text NOT NULL,
    event            jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    read_at          timestamptz
);
CREATE INDEX idx_notifications_unread ON automation.notifications (organization_id, created_at DESC)
    WHERE read_at IS NULL;

-- The search_match source reads new companies in creation order.
CREATE INDEX entities_created_at_idx ON content.entities (created_at, id);

-- Privileges ----------------------------------------------------------------------------------
GRANT USAGE ON SCHEMA automation TO hreg_app, hreg_worker;

-- The application manages rules and watch lists, reads what fired, and marks notifications read.
GRANT SELECT, INSERT, UPDATE ON automation.trigger_rule TO hreg_app;
GRANT SELECT, INSERT, DELETE ON automation.watch_list TO hreg_app;
GRANT SELECT ON automation.trigger_log, automation.scheduled_action, automation.scheduled_trigger_execution
    TO hreg_app;
GRANT SELECT, UPDATE (read_at) ON automation.notifications TO hreg_app;

-- The workers evaluate rules: they read rules and watch lists and write everything a firing leaves.
GRANT SELECT ON automation.trigger_rule, automation.watch_list TO hreg_worker;
GRANT SELECT, INSERT, UPDATE ON automation.trigger_log, automation.scheduled_action,
                                automation.scheduled_trigger_execution TO hreg_worker;
GRANT SELECT, INSERT ON automation.notifications TO hreg_worker;
