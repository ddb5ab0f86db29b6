-- Tables of the application: searches, entities, raw documents, the job queue and its history.

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
    updated_at       timestamptz NOT NULL DEFAULT now()
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
    -- The empty suffix (not NULL) keeps the register key unique without NULLS NOT DISTINCT.
    CONSTRAINT entities_register_key UNIQUE (court_code, register_type, register_number, register_suffix)
)
-- Every pipeline step moves processing_status. Left unindexed, with room on each page, those
-- updates are HOT: no index entries per step. The job table answers "what is where".
WITH (fillfactor = 80);

-- content.raw_documents: content-addressed, one row per sha256 ----------------------------------
CREATE TABLE content.raw_documents (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    sha256        text NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    entity_id     uuid REFERENCES content.entities (id) ON DELETE SET NULL,
    kind          text NOT NULL CHECK (kind IN ('si', 'shareholder_list', 'page')),
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
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entity_revisions_key_idx ON content.entity_revisions (source_record_key, id DESC);
CREATE INDEX entity_revisions_entity_idx ON content.entity_revisions (entity_id, created_at DESC);

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
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX shareholder_lists_entity_idx ON content.shareholder_lists (entity_id, id DESC);

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
    UNIQUE (list_id, position)
);
CREATE INDEX shareholders_linked_entity_idx ON content.shareholders (linked_entity_id) WHERE linked_entity_id IS NOT NULL;

-- processing.job_types: the one source of retry, lease and batch settings ----------------------
CREATE TABLE processing.job_types (
    type              text PRIMARY KEY,
    stage             integer NOT NULL,
    max_retries       integer NOT NULL CHECK (max_retries >= 0),
    backoff_base_s    double precision NOT NULL CHECK (backoff_base_s > 0),
    backoff_cap_s     double precision NOT NULL CHECK (backoff_cap_s > 0),
    lease_seconds     integer NOT NULL CHECK (lease_seconds > 0),
    batch_size        integer NOT NULL CHECK (batch_size > 0),
    current_version   text,
    description       text NOT NULL
);

INSERT INTO processing.job_types
    (type, stage, max_retries, backoff_base_s, backoff_cap_s, lease_seconds, batch_size, description)
VALUES
    ('basic_discovery',      1, 3, 10, 600, 300,   5, 'Search the register and download the SI documents of what it finds.'),
    ('xml_parsing',          2, 3,  5, 300, 600, 5000, 'Parse a stored SI document into the canonical company record.'),
    ('shareholder_download', 3, 3, 30, 900, 300,   5, 'Download the shareholder list from the DK tree.'),
    ('shareholder_parsing',  4, 2, 10, 300, 600,  20, 'Extract shareholders from a stored shareholder list.');

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
    previous_job_id  uuid REFERENCES processing.processing_jobs (id) ON DELETE SET NULL,
    failure_class    text CHECK (failure_class IN ('timeout', 'lease_expired', 'dependency_unavailable',
                                                   'invalid_file', 'unsupported_version', 'parser_error')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- What the job works on; two active jobs with the same key would do the same work twice.
    work_key         text GENERATED ALWAYS AS (
                         type || ':' || coalesce(raw_document_id::text, entity_id::text, search_id::text, id::text)
                         || ':' || coalesce(parser_version, '')) STORED,
    CONSTRAINT processing_jobs_has_subject CHECK (search_id IS NOT NULL OR entity_id IS NOT NULL),
    CONSTRAINT processing_jobs_manual_has_requester
        CHECK (trigger <> 'manual' OR (requested_by IS NOT NULL AND nullif(btrim(reason), '') IS NOT NULL)),
    CONSTRAINT processing_jobs_failure_class_only_when_failed
        CHECK (failure_class IS NULL OR status = 'failed')
);

-- The poll for due queued jobs reads only this small index, in claim order (id breaks ties).
CREATE INDEX processing_jobs_due_idx ON processing.processing_jobs (type, next_attempt_at, id)
    WHERE status = 'queued';
-- The lease reaper reads only running jobs.
CREATE INDEX processing_jobs_lease_idx ON processing.processing_jobs (lease_until)
    WHERE status = 'running';
CREATE UNIQUE INDEX processing_jobs_active_work_key ON processing.processing_jobs (work_key)
    WHERE status IN ('queued', 'running');
CREATE INDEX processing_jobs_entity_idx ON processing.processing_jobs (entity_id, type);
CREATE INDEX processing_jobs_search_idx ON processing.processing_jobs (search_id) WHERE search_id IS NOT NULL;
CREATE INDEX processing_jobs_raw_document_idx ON processing.processing_jobs (raw_document_id, parser_version);
CREATE INDEX processing_jobs_failed_idx ON processing.processing_jobs (type, failure_class)
    WHERE status = 'failed';

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
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX job_step_history_job_idx ON processing.job_step_history (job_id, attempt_number, id);
CREATE INDEX job_step_history_run_idx ON processing.job_step_history (dagster_run_id) WHERE dagster_run_id IS NOT NULL;

-- processing.rate_limits: token buckets shared by every process ---------------------------------
CREATE TABLE processing.rate_limits (
    name            text PRIMARY KEY,
    capacity        double precision NOT NULL CHECK (capacity > 0),
    refill_per_s    double precision NOT NULL CHECK (refill_per_s > 0),
    tokens          double precision NOT NULL,
    refilled_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
