-- name: store_document
-- Store a document under its sha256 (inline :content or at :storage_path); the same bytes again keep their row and gain an entity if they had none. Returns the id.
INSERT INTO content.raw_documents
    (sha256, entity_id, kind, media_type, filename, size_bytes, content, storage_path, source_url)
VALUES (:sha256, :entity_id, :kind, :media_type, :filename, :size_bytes, :content, :storage_path, :source_url)
ON CONFLICT (sha256) DO UPDATE SET entity_id = coalesce(content.raw_documents.entity_id, EXCLUDED.entity_id)
RETURNING id

-- name: load_documents
-- The documents :ids with their content or storage key.
SELECT id, sha256, kind, media_type, filename, content, storage_path
  FROM content.raw_documents WHERE id = ANY(CAST(:ids AS uuid[]))

-- name: documents_at_local_paths
-- The documents stored by an absolute local path, from before documents were stored by key.
SELECT id, sha256, storage_path FROM content.raw_documents WHERE storage_path LIKE '/%'

-- name: set_storage_key
-- Store document :id by the key :key.
UPDATE content.raw_documents SET storage_path = :key WHERE id = :id
