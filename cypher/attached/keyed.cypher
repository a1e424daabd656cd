// A tenant's keyed notes (LangGraph store items), most recently updated first.
MATCH (node:Note {tenant: $tenant})
WHERE node.store_key IS NOT NULL
RETURN @note_map AS note, node.attached AS attached, node.store_key AS store_key
ORDER BY node.updated_at DESC, node.store_key
SKIP $offset LIMIT $limit
