// A tenant's keyed notes (LangGraph store items), the most recently put first; superseded ones only with
// $include_invalid; archived ones never. With $as_of (recorded time), the items held then, superseded or archived
// as of then (note_filter); the engine orders and pages those by the puts of then, so it reads them all. The key
// as a range (every key is text, so `>= ''` holds for all of them): the planner seeks the tenant's keys in
// Note(tenant, store_key) then, where `IS NOT NULL` has it scan every tenant's.
MATCH (node:Note {tenant: $tenant})
WHERE node.store_key >= '' AND @attached_by_then = 'item' AND @note_filter
RETURN @attached_map
ORDER BY node.attached_at DESC, node.store_key
SKIP $offset LIMIT $limit
