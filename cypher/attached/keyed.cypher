// A tenant's keyed notes (LangGraph store items), the most recently put first; superseded ones only with
// $superseded; archived ones never.
MATCH (node:Note {tenant: $tenant})
WHERE node.store_key IS NOT NULL AND node.attached_by = 'item' AND ($superseded OR node.invalid_at IS NULL) AND node.archived_at IS NULL
RETURN @attached_map
ORDER BY node.attached_at DESC, node.store_key
SKIP $offset LIMIT $limit
