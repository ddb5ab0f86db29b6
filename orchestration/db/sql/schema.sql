-- The current schema: tables, columns, constraints, indexes, roles, privileges and row-level
-- security, as the versioned migrations (db/sql/migrations) leave them at head. It is the one
-- place to read the tables; functions, triggers and views are in db/sql/functions and
-- db/sql/views. tests/test_migrations.py builds a database from this file and the definitions
-- (functions/job_work_key.sql first, in the schema processing: the work_key column calls it) and
-- checks that it equals a database migrated from zero. A migration that changes a table changes this file too.
--
-- Columns are in the order the migrations give them (a column added later comes last).


CREATE SCHEMA IF NOT EXISTS content;
CREATE SCHEMA IF NOT EXISTS processing;

-- public.searches ------------------------------------------------------------------------------
CREATE TABLE public.searches (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id          uuid NOT NULL,
    query            text NOT NULL CHECK (length(btrim(query)) > 0),
    mode             text NOT NULL DEFAULT 'all' CHECK (mode IN ('all', 'any', 'exact')),
    register_type    text CHECK (register_type IN ('HRA', 'HRB', 'GnR', 'PR', 'VR')),
    court            text,
    include_deleted  boolean NOT NULL DEFAULT false,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    result_count     integer,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- Result pages to read (up to 100 rows, one retrieval each); NULL: HREG_DISCOVERY_RESULT_PAGES.
    result_pages     integer CHECK (result_pages BETWEEN 1 AND 100)
);
CREATE INDEX searches_user_id_idx ON public.searches (user_id, created_at DESC);

-- content.entities -----------------------------------------------------------------------------
CREATE TABLE content.entities (
    id                           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    court_code                   text NOT NULL,
    court_name                   text,
    register_type                text NOT NULL CHECK (register_type IN ('HRA', 'HRB', 'GnR', 'PR', 'VR')),
    register_number              text NOT NULL CHECK (register_number ~ '^[0-9]+$'),
    register_suffix              text NOT NULL DEFAULT '',
    name                         text NOT NULL,
    legal_form                   text,
    seat                         text,
    register_status              text,
    processing_status            text NOT NULL DEFAULT 'discovered' CHECK (processing_status IN (
                                     'discovered', 'basic_discovery_running', 'xml_ready', 'xml_parsing',
                                     'parsed', 'xml_download_failed', 'xml_parsing_failed')),
    shareholder_research_status  text NOT NULL DEFAULT 'none' CHECK (shareholder_research_status IN (
                                     'none', 'requested', 'downloading', 'parsing', 'completed', 'failed')),
    current_si_document_id       uuid,
    discovered_by_search_id      uuid REFERENCES public.searches (id) ON DELETE SET NULL,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    updated_at                   timestamptz NOT NULL DEFAULT now(),
    -- Transaction that inserted the row: event streams read in this order (automation/sources.py).
    created_xid                  xid8 NOT NULL DEFAULT pg_current_xact_id(),
    -- What the register's result row says besides name, seat and status: the document kinds it
    -- links to (AD, CD, DK, SI…) and earlier names ([{"name", "seat"}], newest first).
    documents_offered            text[],
    earlier_names                jsonb NOT NULL DEFAULT '[]'::jsonb,
    -- The empty suffix (not NULL) keeps the register key unique without NULLS NOT DISTINCT.
    CONSTRAINT entities_register_key UNIQUE (court_code, register_type, register_number, register_suffix)
)
-- Every pipeline step moves processing_status. Left unindexed, with room on each page, those
-- updates are HOT: no index entries per step. The job table answers "what is where".
WITH (fillfactor = 80);
-- New companies are read in this order (the search_match source of the monitoring rules).
CREATE INDEX entities_created_xid_idx ON content.entities (created_xid, id);
-- Backfills select the companies of a register court (the code without a department letter).
CREATE INDEX entities_court_idx ON content.entities ((left(court_code, 5)), id);

-- public.search_results: every row a search found, in the register's order ----------------------
CREATE TABLE public.search_results (
    search_id  uuid NOT NULL REFERENCES public.searches (id) ON DELETE CASCADE,
    position   integer NOT NULL CHECK (position > 0),
    entity_id  uuid NOT NULL REFERENCES content.entities (id) ON DELETE CASCADE,
    PRIMARY KEY (search_id, position)
);
CREATE INDEX search_results_entity_idx ON public.search_results (entity_id);

-- content.raw_documents: content-addressed, one row per sha256 ----------------------------------
CREATE TABLE content.raw_documents (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    sha256        text NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    entity_id     uuid REFERENCES content.entities (id) ON DELETE SET NULL,
    kind          text NOT NULL CHECK (kind IN ('si', 'shareholder_list', 'page', 'printout')),
    media_type    text NOT NULL,
    filename      text,
    size_bytes    bigint NOT NULL CHECK (size_bytes >= 0),
    content       bytea,
    storage_path  text,
    source_url    text,
    retrieved_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT raw_documents_has_bytes CHECK (content IS NOT NULL OR storage_path IS NOT NULL)
);
CREATE INDEX raw_documents_entity_idx ON content.raw_documents (entity_id, kind, retrieved_at DESC);

ALTER TABLE content.entities
    ADD CONSTRAINT entities_current_si_document_fk
    FOREIGN KEY (current_si_document_id) REFERENCES content.raw_documents (id) ON DELETE SET NULL;

-- content.entity_revisions: parsed company records, a new row only when the content changed ------
CREATE TABLE content.entity_revisions (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entity_id          uuid NOT NULL REFERENCES content.entities (id) ON DELETE CASCADE,
    source_record_key  text NOT NULL,
    content_hash       text NOT NULL,
    record             jsonb NOT NULL,
    parser_version     text NOT NULL,
    raw_document_id    uuid REFERENCES content.raw_documents (id) ON DELETE SET NULL,
    job_id             uuid,
    created_at         timestamptz NOT NULL DEFAULT now(),
    created_xid        xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX entity_revisions_key_idx ON content.entity_revisions (source_record_key, id DESC);
CREATE INDEX entity_revisions_entity_idx ON content.entity_revisions (entity_id, created_at DESC);
CREATE INDEX entity_revisions_created_xid_idx ON content.entity_revisions (created_xid, id);

-- content.shareholder_lists / content.shareholders: one revision per list ----------------------
CREATE TABLE content.shareholder_lists (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entity_id          uuid NOT NULL REFERENCES content.entities (id) ON DELETE CASCADE,
    raw_document_id    uuid REFERENCES content.raw_documents (id) ON DELETE SET NULL,
    job_id             uuid,
    content_hash       text NOT NULL,
    method             text NOT NULL CHECK (method IN ('rules', 'llm')),
    total_nominal      numeric(20, 2),
    currency           text,
    capital            numeric(20, 2),
    validation         jsonb NOT NULL DEFAULT '{}'::jsonb,
    valid              boolean NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    created_xid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
    -- Where the words came from; whether OCR re-read a text layer that did not verify. NULL: read
    -- before the reader recorded it.
    source             text CHECK (source IN ('text_layer', 'ocr', 'mixed')),
    ocr_fallback       text CHECK (ocr_fallback IN ('used', 'not_better', 'failed'))
);
CREATE INDEX shareholder_lists_entity_idx ON content.shareholder_lists (entity_id, id DESC);
CREATE INDEX shareholder_lists_created_xid_idx ON content.shareholder_lists (created_xid, id) WHERE valid;

CREATE TABLE content.shareholders (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    list_id             bigint NOT NULL REFERENCES content.shareholder_lists (id) ON DELETE CASCADE,
    entity_id           uuid NOT NULL REFERENCES content.entities (id) ON DELETE CASCADE,
    position            integer NOT NULL,
    kind                text NOT NULL CHECK (kind IN ('person', 'organisation')),
    name                text NOT NULL,
    first_name          text,
    last_name           text,
    birth_date          date,
    residence           text,
    seat                text,
    register_court      text,
    register_type       text,
    register_number     text,
    linked_entity_id    uuid REFERENCES content.entities (id) ON DELETE SET NULL,
    nominal_total       numeric(20, 2) NOT NULL,
    percentage          numeric(7, 4),
    -- The list says "< 1 %"; percentage is then worked out from the nominal amounts.
    percentage_below_one boolean NOT NULL DEFAULT false,
    shares              jsonb NOT NULL DEFAULT '[]'::jsonb,
    -- ISO 3166 code of the register's country; a foreign register's court or authority and number
    -- are in register_court and register_number.
    register_country    text,
    -- The changes column's text beside the shareholder's rows, as read: where its shares came from.
    changes             text,
    UNIQUE (list_id, position)
);
CREATE INDEX shareholders_linked_entity_idx ON content.shareholders (linked_entity_id) WHERE linked_entity_id IS NOT NULL;

-- content.register_announcements / content.announcement_polls: the register's announcements read,
-- matched to known companies, and the results pages (court, ended day) read ------------------
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

-- processing.job_priority: interactive (a person waits) or background; in this order the claim
-- and the register's rate limit serve them.
CREATE TYPE processing.job_priority AS ENUM ('interactive', 'background');

-- processing.job_types: the one source of retry, lease, batch and priority settings -------------
CREATE TABLE processing.job_types (
    type              text PRIMARY KEY,
    -- Its place in the pipeline's order (the stage gate of processing.due_jobs). NULL: a request
    -- beside the pipeline, which waits for no earlier stage and holds no later one back.
    stage             integer,
    max_retries       integer NOT NULL CHECK (max_retries >= 0),
    backoff_base_s    double precision NOT NULL CHECK (backoff_base_s > 0),
    backoff_cap_s     double precision NOT NULL CHECK (backoff_cap_s > 0),
    lease_seconds     integer NOT NULL CHECK (lease_seconds > 0),
    batch_size        integer NOT NULL CHECK (batch_size > 0),
    current_version   text,
    description       text NOT NULL,
    -- What a new job of the type is, unless it says otherwise.
    priority          processing.job_priority NOT NULL DEFAULT 'interactive',
    -- Background jobs of the type that may hold a claim at once (NULL: any number): background
    -- jobs waiting for the register's rate limit never hold every worker while a person waits.
    background_slots  integer CHECK (background_slots > 0),
    -- What a job of the type shows on its entity: the status column of content.entities it moves
    -- (NULL: none) and the value that column takes while a job runs, when one completes and when
    -- one fails for good (NULL: unchanged). The trigger functions read them (apply_job_progress,
    -- handle_job_failure_and_retries, sync_shareholder_*_status). A search shows its own job's
    -- status whatever the type.
    entity_status_column     text CHECK (entity_status_column IN ('processing_status', 'shareholder_research_status')),
    entity_status_running    text,
    entity_status_completed  text,
    entity_status_failed     text,
    -- The type of the job a completed one queues, for the document its result names, of the same
    -- request (apply_job_progress).
    continued_by      text REFERENCES processing.job_types (type),
    CONSTRAINT job_types_entity_status_has_column CHECK (
        entity_status_column IS NOT NULL
        OR num_nonnulls(entity_status_running, entity_status_completed, entity_status_failed) = 0)
);

INSERT INTO processing.job_types
    (type, stage, max_retries, backoff_base_s, backoff_cap_s, lease_seconds, batch_size, description, background_slots,
     entity_status_column, entity_status_running, entity_status_completed, entity_status_failed, continued_by)
VALUES
    -- Register retrievals are claimed one job at a time: a run waiting for a token holds no other job.
    -- A discovery of an entity shows only its final failure on it.
    ('basic_discovery',      1, 3, 10, 600, 300,    1, 'Search the register and download the SI documents of what it finds.', 1,
     'processing_status', NULL, NULL, 'xml_download_failed', NULL),
    ('xml_parsing',          2, 3,  5, 300, 600, 5000, 'Parse a stored SI document into the canonical company record.', NULL,
     'processing_status', 'xml_parsing', 'parsed', 'xml_parsing_failed', NULL),
    ('shareholder_download', 3, 3, 30, 900, 300,    1, 'Download the shareholder list from the DK tree.', 1,
     'shareholder_research_status', 'downloading', NULL, 'failed', 'shareholder_parsing'),
    ('shareholder_parsing',  4, 2, 10, 300, 600,   20, 'Extract shareholders from a stored shareholder list.', NULL,
     'shareholder_research_status', 'parsing', 'completed', 'failed', NULL),
    -- A printout shows nothing on its entity: it is listed with the entity's documents.
    ('printout_download', NULL, 3, 30, 900, 300,    1, 'Download the current printout (AD) of a company.', 1,
     NULL, NULL, NULL, NULL, NULL);

-- processing.failure_classes: seeds/002's classes; the retry trigger and the workers read them --
CREATE TABLE processing.failure_classes (
    failure_class  text PRIMARY KEY,
    -- Permanent: retrying cannot help; the job waits for a new parser or a manual job.
    permanent      boolean NOT NULL,
    description    text NOT NULL
);

INSERT INTO processing.failure_classes (failure_class, permanent, description) VALUES
    ('timeout',                false, 'The work took longer than allowed; a later attempt may finish.'),
    ('lease_expired',          false, 'The worker stopped renewing its lease (crashed or cancelled).'),
    ('dependency_unavailable', false, 'The register, the database or another service was unreachable.'),
    ('invalid_file',           true,  'The document is not what it claims to be (not XML, corrupt, hostile).'),
    ('unsupported_version',    true,  'The document is of a version the parser does not know.'),
    ('parser_error',           true,  'The parser could not read a document of a known kind.');

-- processing.processing_jobs ------------------------------------------------------------------
CREATE TABLE processing.processing_jobs (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    type             text NOT NULL REFERENCES processing.job_types (type),
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'completed', 'failed')),
    search_id        uuid REFERENCES public.searches (id) ON DELETE CASCADE,
    entity_id        uuid REFERENCES content.entities (id) ON DELETE CASCADE,
    raw_document_id  uuid REFERENCES content.raw_documents (id) ON DELETE SET NULL,
    parser_version   text,
    data             jsonb NOT NULL DEFAULT '{}'::jsonb,
    result           jsonb,
    retry_count      integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
    max_retries      integer NOT NULL CHECK (max_retries >= 0),
    worker_id        text,
    started_at       timestamptz,
    completed_at     timestamptz,
    lease_until      timestamptz,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    trigger          text NOT NULL DEFAULT 'automatic'
                     CHECK (trigger IN ('automatic', 'upload', 'parser_change', 'manual')),
    requested_by     uuid,
    reason           text,
    -- A job in this table or in processing.job_archive, so not a foreign key.
    previous_job_id  uuid,
    failure_class    text REFERENCES processing.failure_classes (failure_class),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- What the job works on; two active jobs with the same key would do the same work twice.
    work_key         text GENERATED ALWAYS AS (
                         processing.job_work_key(type, raw_document_id, entity_id, search_id, parser_version)) STORED,
    CONSTRAINT processing_jobs_has_subject CHECK (search_id IS NOT NULL OR entity_id IS NOT NULL),
    CONSTRAINT processing_jobs_manual_has_requester
        CHECK (trigger <> 'manual' OR (requested_by IS NOT NULL AND nullif(btrim(reason), '') IS NOT NULL)),
    CONSTRAINT processing_jobs_failure_class_only_when_failed
        CHECK (failure_class IS NULL OR status = 'failed'),
    -- Interactive first: the claim's order and the register's rate limit (fill_job_defaults sets it).
    priority         processing.job_priority NOT NULL
);

-- The poll for due queued jobs reads only this small index, in claim order (id breaks ties).
CREATE INDEX processing_jobs_due_idx ON processing.processing_jobs (type, priority, next_attempt_at, id)
    WHERE status = 'queued';
-- The lease reaper reads only running jobs.
CREATE INDEX processing_jobs_lease_idx ON processing.processing_jobs (lease_until)
    WHERE status = 'running';
CREATE UNIQUE INDEX processing_jobs_active_work_key ON processing.processing_jobs (work_key)
    WHERE status IN ('queued', 'running');
CREATE INDEX processing_jobs_entity_idx ON processing.processing_jobs (entity_id, type);
CREATE INDEX processing_jobs_search_idx ON processing.processing_jobs (search_id) WHERE search_id IS NOT NULL;
CREATE INDEX processing_jobs_failed_idx ON processing.processing_jobs (type, failure_class)
    WHERE status = 'failed';

-- The archive takes the oldest completed jobs first.
CREATE INDEX processing_jobs_completed_idx ON processing.processing_jobs (completed_at)
    WHERE status = 'completed';
-- The dead letter asks which failed jobs were retried.
CREATE INDEX processing_jobs_previous_job_idx ON processing.processing_jobs (previous_job_id)
    WHERE previous_job_id IS NOT NULL;

-- processing.job_archive: completed jobs after the retention period (seeds/003's history of
-- finished queue entries), moved by archive_completed_jobs. The job table's columns in the same
-- order, after the time of the move: a column added to both later comes last in both.
CREATE TABLE processing.job_archive (
    archived_at      timestamptz NOT NULL DEFAULT now(),
    id               uuid PRIMARY KEY,
    type             text NOT NULL,
    status           text NOT NULL,
    search_id        uuid,
    entity_id        uuid,
    raw_document_id  uuid,
    parser_version   text,
    data             jsonb NOT NULL,
    result           jsonb,
    retry_count      integer NOT NULL,
    max_retries      integer NOT NULL,
    worker_id        text,
    started_at       timestamptz,
    completed_at     timestamptz,
    lease_until      timestamptz,
    next_attempt_at  timestamptz NOT NULL,
    trigger          text NOT NULL,
    requested_by     uuid,
    reason           text,
    previous_job_id  uuid,
    failure_class    text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    work_key         text NOT NULL,
    priority         processing.job_priority NOT NULL
);
-- The stage gate and the re-parse scope ask whether an entity's job of a type succeeded.
CREATE INDEX job_archive_entity_idx ON processing.job_archive (entity_id, type);

-- processing.job_step_history -----------------------------------------------------------------
CREATE TABLE processing.job_step_history (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Not a foreign key: only log_job_step_history writes here, from the job row it logs, so the
    -- key cannot dangle, and a key check per history row (a lock on the job row, with a WAL
    -- record) cost a tenth of the claim throughput. delete_job_step_history is the cascade.
    job_id          uuid NOT NULL,
    step_type       text NOT NULL,
    status          text NOT NULL,
    worker_id       text,
    attempt_number  integer NOT NULL,
    error_message   text,
    error_type      text,
    error_source    text,
    error_code      text,
    dagster_run_id  text,
    duration_ms     bigint,
    metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    created_xid     xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX job_step_history_job_idx ON processing.job_step_history (job_id, attempt_number, id);
CREATE INDEX job_step_history_run_idx ON processing.job_step_history (dagster_run_id) WHERE dagster_run_id IS NOT NULL;
-- Only the failures are events: the index leaves out the claims and completions of the hot path.
CREATE INDEX job_step_history_failed_xid_idx ON processing.job_step_history (created_xid, id)
    WHERE status = 'failed';

-- processing.rate_limits: token buckets shared by every process ---------------------------------
CREATE TABLE processing.rate_limits (
    name            text PRIMARY KEY,
    capacity        double precision NOT NULL CHECK (capacity > 0),
    refill_per_s    double precision NOT NULL CHECK (refill_per_s > 0),
    tokens          double precision NOT NULL,
    refilled_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- When a background taker last had a token: after its patience, the next is owed one, and
    -- people leave it the next token until background_owed_until.
    background_taken_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    background_owed_until timestamptz
);
-- Every token taken in the last hour (take_rate_limit_token prunes older ones): the retrievals of
-- the current hour window, for /metrics.
CREATE TABLE processing.rate_limit_takes (
    name      text NOT NULL REFERENCES processing.rate_limits (name) ON DELETE CASCADE,
    taken_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    priority  processing.job_priority NOT NULL
);
CREATE INDEX rate_limit_takes_name_idx ON processing.rate_limit_takes (name, taken_at);

-- Roles and privileges. The owner (who runs the migrations) owns every object.
--   hreg_app     the application: creates searches and sees only its own (row-level security on
--                user_id, taken from the setting hreg.user_id), reads content, and may move an
--                entity from discovered to basic_discovery_running.
--   hreg_worker  the workers: claim and report jobs, write content.
-- Both are NOLOGIN group roles: grant them to login roles, or SET ROLE to them.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hreg_app') THEN
        CREATE ROLE hreg_app NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hreg_worker') THEN
        CREATE ROLE hreg_worker NOLOGIN;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public, content, processing TO hreg_app, hreg_worker;

-- The application.
GRANT SELECT, INSERT ON public.searches TO hreg_app;
GRANT SELECT ON content.entities, content.entity_revisions, content.shareholder_lists,
                content.shareholders TO hreg_app;
GRANT UPDATE (processing_status) ON content.entities TO hreg_app;
GRANT SELECT ON processing.job_types TO hreg_app;
GRANT SELECT ON processing.failure_classes TO hreg_app, hreg_worker;
GRANT SELECT ON content.register_announcements, content.announcement_polls TO hreg_app;
GRANT SELECT, INSERT ON content.register_announcements, content.announcement_polls TO hreg_worker;

-- The workers.
GRANT SELECT, UPDATE ON public.searches TO hreg_worker;
GRANT SELECT, INSERT, UPDATE ON content.entities, content.raw_documents, content.entity_revisions,
                                content.shareholder_lists, content.shareholders TO hreg_worker;
GRANT SELECT, INSERT, UPDATE ON processing.processing_jobs TO hreg_worker;
GRANT SELECT ON processing.job_types, processing.job_step_history TO hreg_worker;
GRANT SELECT ON processing.job_archive TO hreg_worker;
GRANT SELECT ON public.search_results TO hreg_app;
GRANT SELECT, INSERT, UPDATE ON public.search_results TO hreg_worker;

-- Row-level security. The owner is exempt (it does not FORCE), so triggers, which run as the
-- owner, see every row.
ALTER TABLE public.searches ENABLE ROW LEVEL SECURITY;
CREATE POLICY searches_own_rows ON public.searches
    FOR ALL TO hreg_app
    USING (user_id = nullif(current_setting('hreg.user_id', true), '')::uuid)
    WITH CHECK (user_id = nullif(current_setting('hreg.user_id', true), '')::uuid);
CREATE POLICY searches_worker ON public.searches FOR ALL TO hreg_worker USING (true) WITH CHECK (true);

-- The application sees the results of its own searches only (the policy on searches applies).
ALTER TABLE public.search_results ENABLE ROW LEVEL SECURITY;
CREATE POLICY search_results_own_searches ON public.search_results FOR SELECT TO hreg_app
    USING (EXISTS (SELECT 1 FROM public.searches s WHERE s.id = search_id));
CREATE POLICY search_results_worker ON public.search_results FOR ALL TO hreg_worker USING (true) WITH CHECK (true);

ALTER TABLE content.entities ENABLE ROW LEVEL SECURITY;
CREATE POLICY entities_read ON content.entities FOR SELECT TO hreg_app USING (true);
-- The application may only ask for discovery of a discovered entity.
CREATE POLICY entities_request_discovery ON content.entities
    FOR UPDATE TO hreg_app
    USING (processing_status = 'discovered')
    WITH CHECK (processing_status = 'basic_discovery_running');
CREATE POLICY entities_worker ON content.entities FOR ALL TO hreg_worker USING (true) WITH CHECK (true);

-- Monitoring rules (seeds/004 adapted): organizations and their users watch companies, and rules
-- say "when this happens, do that". As in the seed, trigger_log, scheduled_action and
-- scheduled_trigger_execution refer to trigger_rule logically, without foreign keys, so that the
-- history outlives a rule.

CREATE SCHEMA automation;

-- automation.trigger_rule -----------------------------------------------------------------------
CREATE TABLE automation.trigger_rule (
    id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name              varchar(255) NOT NULL CHECK (length(btrim(name)) > 0),
    source_type       varchar(40) NOT NULL
                      CHECK (source_type IN ('entity_changed', 'search_match', 'job_failed',
                                             'announcement_for_watched_company', 'schedule')),
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
    trigger_on       varchar(40) NOT NULL,
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
