MATCH (node:Note {tenant: $tenant})
WHERE ($superseded OR node.invalid_at IS NULL) AND ($archived OR node.archived_at IS NULL)
RETURN @note_map AS note
ORDER BY node.created_at DESC, node.id
SKIP $offset LIMIT $limit
