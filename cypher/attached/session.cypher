// A session's notes that one adapter attached to (chat messages), in the order they were said.
MATCH (node:Note {tenant: $tenant, session: $session})
WHERE node.attached_by = $kind
RETURN @attached_map
ORDER BY node.seq
