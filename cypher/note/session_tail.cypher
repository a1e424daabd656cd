// The last $n notes of a session, oldest first: whose neighbourhood a new turn of the session grows.
MATCH (node:Note {tenant: $tenant, session: $session})
WHERE node.seq IS NOT NULL
WITH node ORDER BY node.seq DESC LIMIT $n
RETURN @note_map AS note
ORDER BY note.seq
