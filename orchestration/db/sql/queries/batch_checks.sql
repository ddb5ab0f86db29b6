-- name: malformed_register_numbers
-- How many of the companies :entity_ids have a register number that is not digits only (the suffix apart) or a court code that is no XJustiz code.
SELECT count(*) FROM content.entities
 WHERE id = ANY(CAST(:entity_ids AS uuid[]))
   AND NOT (register_number ~ '^[1-9][0-9]{0,6}$' AND court_code ~ '^[A-Z][0-9]{4}$')

-- name: records_of_another_register
-- How many of the companies :entity_ids have a current record whose register key is not the company's.
SELECT count(*) FROM (
    SELECT DISTINCT ON (r.entity_id) r.record, e.court_code, e.register_type, e.register_number,
           e.register_suffix
      FROM content.entity_revisions r JOIN content.entities e ON e.id = r.entity_id
     WHERE r.entity_id = ANY(CAST(:entity_ids AS uuid[]))
     ORDER BY r.entity_id, r.id DESC) latest
 WHERE (record #>> '{register,court_code}', record #>> '{register,type}',
        record #>> '{register,number}', coalesce(record #>> '{register,suffix}', ''))
       IS DISTINCT FROM (court_code, register_type, register_number, register_suffix)

-- name: records_without_name_or_register
-- How many of the companies :entity_ids have a current record without a name or a complete register key.
SELECT count(*) FROM (
    SELECT DISTINCT ON (entity_id) record FROM content.entity_revisions
     WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))
     ORDER BY entity_id, id DESC) latest
 WHERE coalesce(record ->> 'name', '') = ''
    OR coalesce(record #>> '{register,court_code}', '') = ''
    OR coalesce(record #>> '{register,number}', '') = ''

-- name: lists_needing_review
-- How many of the companies :entity_ids have a newest shareholder list that is not verified.
SELECT count(*) FROM (
    SELECT DISTINCT ON (entity_id) valid FROM content.shareholder_lists
     WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))
     ORDER BY entity_id, id DESC) latest
 WHERE NOT latest.valid

-- name: lists_failing_check
-- How many of the companies :entity_ids have a newest shareholder list that fails the validation check :check_name.
SELECT count(*) FROM (
    SELECT DISTINCT ON (entity_id) validation FROM content.shareholder_lists
     WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))
     ORDER BY entity_id, id DESC) latest
 WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(latest.validation -> 'checks') c
                WHERE c ->> 'name' = :check_name AND c ->> 'status' = 'failed')
