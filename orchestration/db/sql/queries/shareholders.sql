-- name: lock_entity_lists
-- Wait for the other writers of shareholder lists of the company named in :key until this transaction ends.
-- Writers of one company take turns, so two parses cannot both decide that their list is new.
SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))

-- name: latest_list
-- What a company's newest shareholder list says (its content hash), against which capital, with which checks.
SELECT id, content_hash, capital, validation
  FROM content.shareholder_lists
 WHERE entity_id = :entity_id
 ORDER BY id DESC
 LIMIT 1

-- name: insert_list
-- Store a shareholder list revision of a company; returns its id.
INSERT INTO content.shareholder_lists
    (entity_id, raw_document_id, job_id, content_hash, method, source, ocr_fallback, total_nominal, currency,
     capital, validation, valid)
VALUES (:entity_id, :raw_document_id, :job_id, :content_hash, :method, :source, :ocr_fallback, :total_nominal,
        :currency, :capital, CAST(:validation AS jsonb), :valid)
RETURNING id

-- name: insert_shareholder
-- Store one shareholder of list :list_id.
INSERT INTO content.shareholders
    (list_id, entity_id, position, kind, name, first_name, last_name, birth_date, residence, seat,
     register_court, register_type, register_number, register_country, linked_entity_id, nominal_total,
     percentage, percentage_below_one, shares, changes)
VALUES (:list_id, :entity_id, :position, :kind, :name, :first_name, :last_name, :birth_date, :residence, :seat,
        :register_court, :register_type, :register_number, :register_country, :linked_entity_id, :nominal_total,
        :percentage, :percentage_below_one, CAST(:shares AS jsonb), :changes)

-- name: entities_by_register
-- The companies (id, court name) with :register_type, :register_number and :suffix, at any court.
SELECT id, court_name
  FROM content.entities
 WHERE register_type = :register_type AND register_number = :register_number AND register_suffix = :suffix

-- name: shareholder_table
-- One row per shareholder of every list (only each company's newest with :latest_only), of the companies :entity_ids or of all (NULL).
SELECT l.id AS list_id, l.entity_id, e.name AS company, l.created_at AS list_created_at, l.valid AS list_valid,
       l.method, l.currency, s.position, s.kind, s.name, s.first_name, s.last_name, s.birth_date, s.residence,
       s.seat, s.register_court, s.register_type, s.register_number, s.register_country, s.linked_entity_id,
       linked.name AS linked_company, s.nominal_total, s.percentage, s.percentage_below_one, s.changes
  FROM content.shareholder_lists l
  JOIN content.entities e ON e.id = l.entity_id
  JOIN content.shareholders s ON s.list_id = l.id
  LEFT JOIN content.entities linked ON linked.id = s.linked_entity_id
 WHERE (NOT :latest_only
        OR l.id = (SELECT max(id) FROM content.shareholder_lists m WHERE m.entity_id = l.entity_id))
   AND (CAST(:entity_ids AS uuid[]) IS NULL OR l.entity_id = ANY(CAST(:entity_ids AS uuid[])))
 ORDER BY l.entity_id, l.id, s.position

-- name: newest_lists
-- The newest shareholder list of each of the companies :entity_ids, with its review status and where its words came from.
SELECT DISTINCT ON (l.entity_id) l.entity_id, l.id, l.valid, l.validation, l.source, l.ocr_fallback
  FROM content.shareholder_lists l
 WHERE l.entity_id = ANY(CAST(:entity_ids AS uuid[]))
 ORDER BY l.entity_id, l.id DESC
