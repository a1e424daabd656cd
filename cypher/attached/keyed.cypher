// A tenant's keyed notes (LangGraph store items), the most recently put first.
MATCH (node:Note {tenant: $tenant})
WHERE node.store_key IS NOT NULL AND node.attached_by = 'item'
RETURN @attached_map
ORDER BY node.attached_at DESC, node.store_key
SKIP $offset LIMIT $limit
