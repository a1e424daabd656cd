// A tenant's keyed notes (LangGraph store items), the most recently put first; superseded ones only with
// $include_invalid; archived ones never. With $as_of (recorded time), the items held then, superseded or archived
// as of then (note_filter); the engine orders and pages those by the puts of then, so it reads them all. The seek
// is asked for: left to its costs, the planner may scan every tenant's keys (in Note(store_key), or the whole of
// Note(tenant, store_key)) where few notes hold keys.
MATCH (node:Note {tenant: $tenant})
USING INDEX SEEK node:Note(tenant, store_key)
WHERE node.store_key IS NOT NULL AND @attached_by_then = 'item' AND @note_filter
RETURN @attached_map
ORDER BY node.attached_at DESC, node.store_key
SKIP $offset LIMIT $limit
