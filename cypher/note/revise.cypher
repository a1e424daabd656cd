// A note as it is becomes a NoteVersion and the revision's values apply (a null removes a property), in
// one statement per batch; the vector is set when the revision carries one. Which fields may change, and
// when a revision is stale, the engine decides before it gets here.
UNWIND $revisions AS u
MATCH (n:Note {id: u.id, tenant: $tenant})
CREATE (n)-[:HAS_VERSION]->(v:NoteVersion {@version_props, reason: u.reason, evolution_id: $evolution_id})
SET n += u.values, n.version = n.version + 1, n.updated_at = $now
WITH n, u, v
CALL (n, u) {
  WITH n, u WHERE u.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', u.embedding)
}
RETURN n.id AS note_id, v.version AS version
