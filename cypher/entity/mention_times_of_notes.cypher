// The mentions of the notes $ids: which entity, and when the memory recorded it (see mention_times.cypher).
UNWIND $ids AS id
MATCH (n:Note {tenant: $tenant, id: id})-[m:MENTIONS]->(e:Entity)
RETURN id AS note_id, e.key AS key, coalesce(m.at, n.created_at).epochMillis AS at
