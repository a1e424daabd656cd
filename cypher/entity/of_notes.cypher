// The entities each of these notes mentions, with the mention's confidence and when the memory recorded it (see
// mention_times.cypher).
UNWIND $ids AS id
MATCH (n:Note {tenant: $tenant, id: id})-[m:MENTIONS]->(e:Entity)
RETURN id AS note_id, e.key AS key, @entity_map AS entity, m.confidence AS confidence,
       coalesce(m.at, n.created_at).epochMillis AS at
ORDER BY id, e.mentions, e.key
