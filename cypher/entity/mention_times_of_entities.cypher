// The mentions of the entities $keys (by their own keys): which note, the mention's confidence and when the memory
// recorded it (see mention_times.cypher).
UNWIND $keys AS key
MATCH (:Entity {tenant: $tenant, key: key})<-[m:MENTIONS]-(n:Note)
RETURN n.id AS note_id, key, m.confidence AS confidence, coalesce(m.at, n.created_at).epochMillis AS at
