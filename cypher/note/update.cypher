// The old values go to a NoteVersion in the same transaction that applies the new ones, only if the note
// is still at $expected_version (null: any version); `found` says which version it was at.
// A null in $changes removes that property (how a revert restores an absent category).
@tenant_lock
MATCH (n:Note {id: $id, tenant: $tenant})
WITH n, n.version AS found
CALL (n, found) {
  WITH n WHERE $expected_version IS NULL OR found = $expected_version
  CREATE (n)-[:HAS_VERSION]->(:NoteVersion {@version_props, reason: $reason})
  SET n += $changes, n.version = n.version + 1, n.updated_at = $now
  WITH n WHERE $embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', $embedding)
}
RETURN n.id AS id, found
