// Every note of a session, in the order said, with what any adapter attached to it (null if none): a chat
// history's messages, and what clearing the session deletes (a write that failed between the note and its
// attachment leaves one without).
MATCH (node:Note {tenant: $tenant, session: $session})
WHERE node.seq IS NOT NULL
RETURN @attached_map
ORDER BY node.seq
SKIP $offset LIMIT $limit
