-- name: revisions_after
-- Up to :limit revisions after the position (:after_xid, :after_id) and below the horizon, each with the previous revision of its record and its company.
-- Every stream is read in the order of (inserting transaction, id), up to the oldest transaction
-- still running: below it every transaction has ended, so a row that commits late is read late
-- but never skipped (db/sql/migrations/0004_event_horizon.sql).
SELECT r.id, r.created_xid::text AS created_xid, r.entity_id, r.created_at, r.record,
       p.id AS previous_id, p.record AS previous_record,
       e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
  FROM content.entity_revisions r
  JOIN content.entities e ON e.id = r.entity_id
  LEFT JOIN LATERAL (
      SELECT p.id, p.record FROM content.entity_revisions p
       WHERE p.source_record_key = r.source_record_key AND p.id < r.id
       ORDER BY p.id DESC LIMIT 1) p ON true
 WHERE (r.created_xid, r.id) > (CAST(CAST(:after_xid AS text) AS xid8), CAST(:after_id AS bigint))
   AND r.created_xid < pg_snapshot_xmin(pg_current_snapshot())
 ORDER BY r.created_xid, r.id
 LIMIT :limit

-- name: shareholder_lists_after
-- Up to :limit valid shareholder lists after the position (:after_xid, :after_id) and below the horizon, each saying whether it differs from the company's previous valid list.
SELECT l.id, l.created_xid::text AS created_xid, l.entity_id, l.created_at, p.id AS previous_id,
       p.content_hash <> l.content_hash AS changed,
       e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
  FROM content.shareholder_lists l
  JOIN content.entities e ON e.id = l.entity_id
  LEFT JOIN LATERAL (
      SELECT p.id, p.content_hash FROM content.shareholder_lists p
       WHERE p.entity_id = l.entity_id AND p.id < l.id AND p.valid
       ORDER BY p.id DESC LIMIT 1) p ON true
 WHERE (l.created_xid, l.id) > (CAST(CAST(:after_xid AS text) AS xid8), CAST(:after_id AS bigint))
   AND l.created_xid < pg_snapshot_xmin(pg_current_snapshot())
   AND l.valid
 ORDER BY l.created_xid, l.id
 LIMIT :limit

-- name: entities_after
-- Up to :limit companies recorded after the position (:after_xid, :after_id) and below the horizon.
SELECT e.id, e.id AS entity_id, e.created_xid::text AS created_xid, e.name, e.court_code, e.court_name,
       e.register_type, e.register_number, e.register_suffix, e.legal_form, e.seat, e.created_at
  FROM content.entities e
 WHERE (e.created_xid, e.id) > (CAST(CAST(:after_xid AS text) AS xid8), CAST(:after_id AS uuid))
   AND e.created_xid < pg_snapshot_xmin(pg_current_snapshot())
 ORDER BY e.created_xid, e.id
 LIMIT :limit

-- name: failures_after
-- Up to :limit transitions to failed after the position (:after_xid, :after_id) and below the horizon, each saying whether it is permanent.
-- Every failure transition moves the cursor; the permanent one is an event: its job is failed
-- and it is the job's last attempt (an earlier attempt's failure was re-queued, even when the
-- job has failed for good by the time it is read).
SELECT h.id, h.created_xid::text AS created_xid, h.created_at,
       j.status = 'failed' AND h.attempt_number = j.retry_count + 1 AS permanent,
       j.id AS job_id, j.type AS job_type, j.failure_class, j.entity_id,
       j.search_id, j.retry_count, j.result -> 'error' AS error,
       e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
  FROM processing.job_step_history h
  JOIN processing.processing_jobs j ON j.id = h.job_id
  LEFT JOIN content.entities e ON e.id = j.entity_id
 WHERE (h.created_xid, h.id) > (CAST(CAST(:after_xid AS text) AS xid8), CAST(:after_id AS bigint))
   AND h.created_xid < pg_snapshot_xmin(pg_current_snapshot())
   AND h.status = 'failed'
 ORDER BY h.created_xid, h.id
 LIMIT :limit

-- name: announcements_after
-- Up to :limit register announcements about known companies after the position (:after_xid, :after_id) and below the horizon.
SELECT a.id, a.created_xid::text AS created_xid, a.entity_id, a.created_at, a.portal_id, a.published,
       a.category, a.category_code,
       e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
  FROM content.register_announcements a
  JOIN content.entities e ON e.id = a.entity_id
 WHERE (a.created_xid, a.id) > (CAST(CAST(:after_xid AS text) AS xid8), CAST(:after_id AS bigint))
   AND a.created_xid < pg_snapshot_xmin(pg_current_snapshot())
   AND a.entity_id IS NOT NULL
 ORDER BY a.created_xid, a.id
 LIMIT :limit

-- name: revisions_end
-- The position of the last revision below the horizon.
SELECT t.created_xid::text AS created_xid, t.id FROM content.entity_revisions t
 WHERE t.created_xid < pg_snapshot_xmin(pg_current_snapshot())
 ORDER BY t.created_xid DESC, t.id DESC LIMIT 1

-- name: shareholder_lists_end
-- The position of the last valid shareholder list below the horizon.
SELECT t.created_xid::text AS created_xid, t.id FROM content.shareholder_lists t
 WHERE t.created_xid < pg_snapshot_xmin(pg_current_snapshot()) AND t.valid
 ORDER BY t.created_xid DESC, t.id DESC LIMIT 1

-- name: entities_end
-- The position of the last company recorded below the horizon.
SELECT t.created_xid::text AS created_xid, t.id FROM content.entities t
 WHERE t.created_xid < pg_snapshot_xmin(pg_current_snapshot())
 ORDER BY t.created_xid DESC, t.id DESC LIMIT 1

-- name: failures_end
-- The position of the last transition to failed below the horizon.
SELECT t.created_xid::text AS created_xid, t.id FROM processing.job_step_history t
 WHERE t.created_xid < pg_snapshot_xmin(pg_current_snapshot()) AND t.status = 'failed'
 ORDER BY t.created_xid DESC, t.id DESC LIMIT 1

-- name: announcements_end
-- The position of the last register announcement about a known company below the horizon.
SELECT t.created_xid::text AS created_xid, t.id FROM content.register_announcements t
 WHERE t.created_xid < pg_snapshot_xmin(pg_current_snapshot()) AND t.entity_id IS NOT NULL
 ORDER BY t.created_xid DESC, t.id DESC LIMIT 1

-- name: saved_searches
-- The criteria of the searches :ids.
SELECT id, query, mode, register_type, court FROM public.searches WHERE id = ANY(CAST(:ids AS uuid[]))

-- name: watchers
-- The (organization, rule or NULL) watch-list entries that name the companies :entity_ids.
SELECT entity_id, organization_id, trigger_rule_id FROM automation.watch_list
 WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))

-- name: watched_courts
-- The courts of the companies someone watches (every court with :all_companies), by the watch lists of :organizations and of the rules :rules.
SELECT DISTINCT e.court_code
  FROM content.entities e
 WHERE :all_companies
    OR EXISTS (SELECT 1 FROM automation.watch_list w
                WHERE w.entity_id = e.id
                  AND ((w.trigger_rule_id IS NULL AND w.organization_id = ANY(CAST(:organizations AS uuid[])))
                       OR w.trigger_rule_id = ANY(CAST(:rules AS integer[]))))
 ORDER BY e.court_code

-- name: last_day_read
-- The last day whose announcements of :court_code were read.
SELECT max(day) FROM content.announcement_polls WHERE court_code = :court_code

-- name: record_poll
-- Record that the announcements of :court_code on :day were read, and how many were found.
INSERT INTO content.announcement_polls (court_code, day, found) VALUES (:court_code, :day, :found)
ON CONFLICT (court_code, day) DO NOTHING

-- name: store_announcement
-- Store an announcement, linked to the company it names if we know it; nothing when it is stored already.
-- An announcement names a company by court, register type and number; the suffix ("B") is not
-- always written, and the number is unique within a court and type.
INSERT INTO content.register_announcements
    (portal_id, published, category, category_code, court_code, register_type, register_number,
     register_suffix, name, seat, entity_id)
VALUES (:portal_id, :published, :category, :category_code, :court_code, :register_type, :register_number,
        :register_suffix, :name, :seat,
        (SELECT e.id FROM content.entities e
          WHERE e.court_code = :court_code AND e.register_type = :register_type
            AND e.register_number = :register_number
          ORDER BY e.register_suffix = coalesce(:register_suffix, '') DESC LIMIT 1))
ON CONFLICT (portal_id) DO NOTHING
RETURNING id, entity_id

-- name: watched_entities
-- The companies on the watch list of :organization_id for rule :rule_id (NULL: the organization's own list), by id.
SELECT e.id, e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
  FROM content.entities e
 WHERE e.id IN (SELECT w.entity_id FROM automation.watch_list w
                 WHERE w.organization_id = :organization_id
                   AND w.trigger_rule_id IS NOT DISTINCT FROM CAST(:rule_id AS integer))
 ORDER BY e.id

-- name: search_exists
-- Whether the saved search :id exists.
SELECT 1 FROM public.searches WHERE id = :id

-- name: job_type_names
-- The names of the job types.
SELECT type FROM processing.job_types

-- name: known_entities
-- Which of the companies :ids exist (ids as text).
SELECT id::text FROM content.entities WHERE id = ANY(CAST(:ids AS uuid[]))

-- name: rule_columns
-- Part of the queries below: the columns of automation.trigger_rule that make a rule.
id, name, source_type, source_config, action_type, action_config, enabled, frequency,
       cooldown_seconds, organization_id, created_by, created_date, deleted_date

-- name: create_rule
-- Store a rule, checked beforehand; returns it.
INSERT INTO automation.trigger_rule
    (name, organization_id, source_type, source_config, action_type, action_config, frequency,
     cooldown_seconds, created_by, enabled)
VALUES (:name, CAST(:organization_id AS uuid), :source_type, CAST(:source_config AS jsonb), :action_type,
        CAST(:action_config AS jsonb), :frequency, :cooldown_seconds, CAST(:created_by AS uuid), :enabled)
RETURNING {rule_columns}

-- name: rule
-- The rule :id, deleted or not.
SELECT {rule_columns} FROM automation.trigger_rule WHERE id = :id

-- name: rules
-- The rules that are not deleted, enabled or not, of :organization_id (of every organization when NULL), oldest first.
SELECT {rule_columns} FROM automation.trigger_rule
 WHERE deleted_date IS NULL
   AND (CAST(:organization_id AS uuid) IS NULL OR organization_id = CAST(:organization_id AS uuid))
 ORDER BY id

-- name: live_rules
-- The enabled, not deleted rules of the source types :source_types, oldest first.
SELECT {rule_columns} FROM automation.trigger_rule
 WHERE source_type = ANY(CAST(:source_types AS text[])) AND enabled AND deleted_date IS NULL
 ORDER BY id

-- name: disable_rule
-- Disable the rule :id unless it is deleted, saying who did it (:updated_by).
UPDATE automation.trigger_rule
   SET enabled = false, updated_by = CAST(:updated_by AS uuid), updated_date = now()
 WHERE id = :id AND deleted_date IS NULL

-- name: watch
-- Add the companies :entity_ids to the watch list of :organization_id, or of its rule :rule_id; an entry that exists stays as it is.
INSERT INTO automation.watch_list (organization_id, trigger_rule_id, entity_id, added_by)
SELECT CAST(:organization_id AS uuid), CAST(:rule_id AS integer), entity_id, CAST(:added_by AS uuid)
  FROM unnest(CAST(:entity_ids AS uuid[])) AS entity_id
ON CONFLICT ON CONSTRAINT uq_watch_list DO NOTHING

-- name: rule_log
-- Up to :limit firings of the rule :rule_id, newest first.
SELECT id, created_date, trigger_on, subject_id, status, error_message, event ->> 'summary' AS summary
  FROM automation.trigger_log
 WHERE trigger_rule_id = :rule_id
 ORDER BY created_date DESC, id DESC
 LIMIT :limit

-- name: lock_rule
-- Hold the advisory lock (:lock_class, :rule_id) on a rule until the transaction ends.
SELECT pg_advisory_xact_lock(:lock_class, :rule_id)

-- name: fired_for_event
-- The firing of the rule :rule_id for the event :event_key, if it fired for it.
SELECT id FROM automation.trigger_log WHERE trigger_rule_id = :rule_id AND event_key = :event_key

-- name: fired_within
-- A firing of the rule :rule_id within the interval :window before now (ever when NULL), for the subject :subject_id (any when NULL).
SELECT id FROM automation.trigger_log
 WHERE trigger_rule_id = :rule_id
   AND (CAST(:subject_id AS uuid) IS NULL OR subject_id = CAST(:subject_id AS uuid))
   AND (CAST(:window AS interval) IS NULL OR created_date > now() - CAST(:window AS interval))
 LIMIT 1

-- name: log_firing
-- Record that the rule :rule_id fired for an event, with :status and, when :completed, the time it completed; returns its id.
INSERT INTO automation.trigger_log
    (trigger_rule_id, event_key, subject_id, trigger_on, event, action_type, action_config, status,
     organization_id, completed_date)
VALUES (:rule_id, :event_key, CAST(:subject_id AS uuid), :trigger_on, CAST(:event AS jsonb), :action_type,
        CAST(:action_config AS jsonb), :status, CAST(:organization_id AS uuid),
        CASE WHEN :completed THEN now() END)
RETURNING id

-- name: fail_firing
-- Mark the firing :id as failed with :error_message.
UPDATE automation.trigger_log SET status = 'failed', error_message = :error_message WHERE id = :id

-- name: settle_firing
-- Give the firing :id its outcome :status and :error_message, completed now.
UPDATE automation.trigger_log SET status = :status, error_message = :error_message, completed_date = now()
 WHERE id = :id

-- name: note_firing_error
-- Set the error message of the firing :id, which is still under way.
UPDATE automation.trigger_log SET error_message = :error_message WHERE id = :id

-- name: insert_notification
-- Write a notification of the firing :trigger_log_id of the rule :rule_id, for :user_id (the whole organization when NULL).
INSERT INTO automation.notifications
    (organization_id, user_id, trigger_rule_id, trigger_log_id, entity_id, title, event)
VALUES (CAST(:organization_id AS uuid), CAST(:user_id AS uuid), :rule_id, :trigger_log_id,
        CAST(:entity_id AS uuid), :title, CAST(:event AS jsonb))

-- name: schedule_action
-- Queue the action of the firing :trigger_log_id to run after the interval :delay and to expire :expires_after later (never when NULL); returns its id.
INSERT INTO automation.scheduled_action
    (trigger_rule_id, trigger_log_id, subject_id, organization_id, action_type, action_config,
     source_config, event, execute_at, expires_at, max_retries)
VALUES (:rule_id, :trigger_log_id, CAST(:subject_id AS uuid), CAST(:organization_id AS uuid), :action_type,
        CAST(:action_config AS jsonb), CAST(:source_config AS jsonb), CAST(:event AS jsonb),
        now() + CAST(:delay AS interval),
        now() + CAST(:delay AS interval) + CAST(:expires_after AS interval),
        :max_retries)
RETURNING id

-- name: stale_claim
-- Part of the queries below: a scheduled action claimed longer ago than the interval :stale_after, by an evaluator that died.
(status = 'processing' AND updated_at < now() - CAST(:stale_after AS interval))

-- name: settle_action
-- Give the scheduled action :id its final :status, keeping its last error unless :error is given; with :ran, it ran now.
UPDATE automation.scheduled_action
   SET status = :status, last_error = coalesce(CAST(:error AS text), last_error), updated_at = now(),
       executed_at = CASE WHEN :ran THEN now() END
 WHERE id = :id

-- name: retry_action
-- Put the scheduled action :id back to wait until :execute_at, as attempt :retry_count, with :last_error.
UPDATE automation.scheduled_action
   SET status = 'pending', retry_count = :retry_count, execute_at = :execute_at, last_error = :last_error,
       updated_at = now()
 WHERE id = :id

-- name: expire_overdue_actions
-- Mark the waiting scheduled actions whose expiry has passed as expired; returns their firings and last errors.
UPDATE automation.scheduled_action SET status = 'expired', updated_at = now()
 WHERE expires_at <= now() AND (status = 'pending' OR {stale_claim})
RETURNING trigger_log_id, last_error

-- name: claim_due_actions
-- Take up to :limit due, unexpired scheduled actions, earliest first; returns them.
-- SKIP LOCKED gives concurrent claimers disjoint sets.
WITH due AS (
    SELECT id FROM automation.scheduled_action
     WHERE ((status = 'pending' AND execute_at <= now()) OR {stale_claim})
       AND (expires_at IS NULL OR expires_at > now())
     ORDER BY execute_at, id
     LIMIT :limit
       FOR UPDATE SKIP LOCKED)
UPDATE automation.scheduled_action a SET status = 'processing', updated_at = now()
  FROM due
 WHERE a.id = due.id
RETURNING a.id, a.trigger_rule_id, a.trigger_log_id, a.subject_id, a.organization_id, a.action_type,
          a.action_config, a.source_config, a.event, a.execute_at, a.expires_at, a.status, a.retry_count,
          a.max_retries, a.last_error, a.created_at, a.updated_at, a.executed_at

-- name: last_scheduled_time
-- The latest scheduled time the rule :rule_id has an execution record for.
SELECT max(scheduled_at) FROM automation.scheduled_trigger_execution WHERE trigger_rule_id = :rule_id

-- name: claim_scheduled_time
-- Create the execution record of the rule :rule_id for :scheduled_at; returns nothing when it exists already.
-- The unique (rule, scheduled_at) constraint makes each scheduled time run once, whoever evaluates.
INSERT INTO automation.scheduled_trigger_execution (trigger_rule_id, scheduled_at)
VALUES (:rule_id, :scheduled_at)
ON CONFLICT ON CONSTRAINT uq_scheduled_trigger_execution DO NOTHING
RETURNING id

-- name: finish_scheduled_run
-- Record how the run of the rule :rule_id for :scheduled_at went, completed now.
UPDATE automation.scheduled_trigger_execution
   SET status = :status, total_entities = :total, processed_entities = :processed, failed_entities = :failed,
       error_message = :error_message, completed_at = now()
 WHERE trigger_rule_id = :rule_id AND scheduled_at = :scheduled_at
