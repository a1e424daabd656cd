MATCH (node:Note {tenant: $tenant})
RETURN @note_map AS note
ORDER BY node.created_at DESC, node.id
SKIP $offset LIMIT $limit
