// The tenant's notes that a SearchFilter admits, newest first.
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL AND @note_filter
RETURN @note_map AS note
ORDER BY node.created_at DESC, node.id
SKIP $offset LIMIT $limit
