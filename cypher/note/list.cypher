MATCH (n:Note {tenant: $tenant})
RETURN n {.*, embedding: null} AS note
ORDER BY n.created_at DESC, n.id
SKIP $offset LIMIT $limit
