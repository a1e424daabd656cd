// Erasure: a deleted turn's words leave the neighbourhoods that quote it (its session's notes and their
// versions), in place, and the time it joined them ($joined) leaves their `neighbourhood_after`. They are copies
// of what was said, not history of what the engine derived.
CALL () {
  MATCH (n:Note {tenant: $tenant, session: $session})
  WHERE n.seq IS NOT NULL
  OPTIONAL MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
  WITH collect(DISTINCT n) + collect(v) AS holders
  UNWIND holders AS h
  WITH h WHERE h.neighbourhood CONTAINS $line
  SET h.neighbourhood = replace(replace(replace(h.neighbourhood, '\n' + $line, ''), $line + '\n', ''), $line, '')
}
CALL () {
  MATCH (n:Note {tenant: $tenant, session: $session})
  WHERE n.seq IS NOT NULL AND $joined IN coalesce(n.neighbourhood_after, [])
  SET n.neighbourhood_after = [bound IN n.neighbourhood_after WHERE bound <> $joined]
}
