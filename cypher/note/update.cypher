// The old values go to a NoteVersion in the same transaction that applies the new ones.
@tenant_lock
MATCH (n:Note {id: $id, tenant: $tenant})
CREATE (n)-[:HAS_VERSION]->(:NoteVersion {@version_props, reason: $reason})
SET n += $changes, n.version = n.version + 1, n.updated_at = $now
WITH n
CALL (n) {
  WITH n WHERE $embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', $embedding)
}
RETURN n.id AS id
