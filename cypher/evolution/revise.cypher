// Evolution of existing notes: the old values become a NoteVersion, the new ones apply, and the vector
// is recomputed when an embedded field changed (a neighbourhood refresh keeps it). `content` is never
// touched: what was said stays.
UNWIND $revisions AS u
MATCH (n:Note {id: u.id, tenant: $tenant})
CREATE (n)-[:HAS_VERSION]->(v:NoteVersion {@version_props, reason: u.reason, evolution_id: $evolution_id})
SET n.context = coalesce(u.context, n.context), n.tags = coalesce(u.tags, n.tags),
    n.keywords = coalesce(u.keywords, n.keywords), n.model = CASE WHEN u.analysis IS NULL THEN n.model ELSE u.model END,
    n.analysis = coalesce(u.analysis, n.analysis), n.neighbourhood = coalesce(u.neighbourhood, n.neighbourhood),
    n.version = n.version + 1, n.updated_at = $now
WITH n, u, v
CALL (n, u) {
  WITH n, u WHERE u.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', u.embedding)
}
RETURN n.id AS note_id, v.version AS version
