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
