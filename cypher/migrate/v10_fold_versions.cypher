// Fold each note's versions of its neighbourhood alone as store/upgrade.py planned ($foldings): they go, the
// versions kept are numbered again (through negative numbers, so no two share one meanwhile) and hold from the
// start planned, and the note takes its version count, update time and the times turns joined its neighbourhood.
UNWIND $foldings AS f
MATCH (n:Note {tenant: $tenant, id: f.note_id})
CALL (n, f) {
  MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
  WHERE v.version IN f.drop
  DETACH DELETE v
}
CALL (n, f) {
  UNWIND f.kept AS k
  MATCH (n)-[:HAS_VERSION]->(v:NoteVersion {version: k.old})
  SET v.version = -k.new, v.valid_from = coalesce(k.valid_from, v.valid_from)
}
CALL (n) {
  MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
  WHERE v.version < 0
  SET v.version = -v.version
}
SET n.version = f.version, n.updated_at = coalesce(f.updated_at, n.updated_at),
    n.neighbourhood_after = f.neighbourhood_after
