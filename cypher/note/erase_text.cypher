// Erasure: a deleted turn's words leave the neighbourhoods that quote it (its session's notes and their
// versions), in place. They are copies of what was said, not history of what the engine derived.
MATCH (n:Note {tenant: $tenant, session: $session})
WHERE n.seq IS NOT NULL
OPTIONAL MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
WITH collect(DISTINCT n) + collect(v) AS holders
UNWIND holders AS h
WITH h WHERE h.neighbourhood CONTAINS $line
SET h.neighbourhood = replace(replace(replace(h.neighbourhood, '\n' + $line, ''), $line + '\n', ''), $line, '')
