// The old values go to a NoteVersion in the same transaction that applies the new ones.
MATCH (n:Note {id: $id, tenant: $tenant})
CREATE (n)-[:HAS_VERSION]->(:NoteVersion {
  note_id: n.id, tenant: n.tenant, version: n.version, content: n.content, context: n.context,
  keywords: n.keywords, tags: n.tags, category: n.category, importance: n.importance,
  event_time: n.event_time, valid_from: n.updated_at, valid_to: $now, reason: $reason
})
SET n += $changes, n.version = n.version + 1, n.updated_at = $now
WITH n
CALL (n) {
  WITH n WHERE $embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', $embedding)
}
RETURN n.id AS id
