// Bulk add. MERGE on the identity constraint makes re-adding idempotent; only new notes get a vector.
// The tenant lock keeps a bulk import from slipping a note in while an evolution of the tenant runs.
@tenant_lock
UNWIND $rows AS row
MERGE (n:Note {tenant: $tenant, source: row.source, content_hash: row.content_hash})
ON CREATE SET
  n.id = row.id, n.content = row.content, n.keywords = row.keywords, n.tags = row.tags,
  n.context = row.context, n.category = row.category, n.importance = row.importance,
  n.retrieval_count = 0, n.event_time = row.event_time, n.created_at = $now, n.updated_at = $now,
  n.version = 1, n.valid_from = coalesce(row.event_time, $now), n.analysis = row.analysis, n.model = row.model
WITH n, row, n.id = row.id AS created
CALL (n, row, created) {
  WITH n, row WHERE created
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
}
RETURN row.id AS requested_id, n.id AS id, created
