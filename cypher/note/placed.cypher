// Where each note a SearchFilter admits lies in time, and the keys of the entities it mentions, without its texts:
// what places a whole memory along its time (read/time_map.py). Times as epoch milliseconds, as in @note_map.
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL AND @note_filter
RETURN node.id AS id, node.session AS session, node.seq AS seq, node.event_time.epochMillis AS event_time,
       node.created_at.epochMillis AS created_at, node.updated_at.epochMillis AS updated_at,
       node.invalid_at.epochMillis AS invalid_at,
       [bound IN coalesce(node.archived_periods, []) | bound.epochMillis] AS archived_periods,
       [(node)-[:MENTIONS]->(entity:Entity) | entity.key] AS entities
