// A session's notes that carry an attachment (chat messages), in the order they were said.
MATCH (node:Note {tenant: $tenant, session: $session})
WHERE node.attached IS NOT NULL
RETURN @note_map AS note, node.attached AS attached, node.store_key AS store_key
ORDER BY node.seq
