// A note as it is becomes a NoteVersion and the revision's values apply (a null removes a property), in
// one statement per batch; the vector is set when the revision carries one, and its passages replace the
// note's when it carries them (a new content). Which fields may change, and
// when a revision is stale, the engine decides before it gets here. Each row returns the note's text fields
// ($fields) as they were before it, for the tenant's BM25 statistics (store/neo4j_text.py).
UNWIND $revisions AS u
MATCH (n:Note {id: u.id, tenant: $tenant})
WITH n, u, [field IN $fields | n[field]] AS texts
CREATE (n)-[:HAS_VERSION]->(v:NoteVersion {@version_props, reason: u.reason, evolution_id: $evolution_id})
SET n += u.values, n.version = n.version + 1, n.updated_at = $now
WITH n, u, v, texts
CALL (n, u) {
  WITH n, u WHERE u.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', u.embedding)
}
CALL (n, u) {
  WITH n, u WHERE u.passages IS NOT NULL
  OPTIONAL MATCH (n)-[:HAS_PASSAGE]->(old:Passage)
  DETACH DELETE old
}
CALL (n, u) {
  WITH n, u WHERE u.passages IS NOT NULL
  UNWIND u.passages AS part
  CREATE (n)-[:HAS_PASSAGE]->(passage:Passage {id: part.id, tenant: $tenant, start: part.start, end: part.end})
  WITH passage, part
  CALL db.create.setNodeVectorProperty(passage, 'embedding', part.embedding)
}
RETURN n.id AS note_id, v.version AS version, texts
