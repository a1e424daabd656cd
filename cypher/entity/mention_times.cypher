// Every mention of the tenant's notes: which note, which entity, the mention's confidence and when the memory
// recorded it (a mention written before mentions kept their time counts from when its note was recorded).
MATCH (n:Note {tenant: $tenant})-[m:MENTIONS]->(e:Entity)
WHERE n.created_at IS NOT NULL
RETURN n.id AS note_id, e.key AS key, m.confidence AS confidence, coalesce(m.at, n.created_at).epochMillis AS at
