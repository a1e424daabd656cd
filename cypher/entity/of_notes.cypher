// The entities each of these notes mentions, with the mention's confidence.
UNWIND $ids AS id
MATCH (:Note {tenant: $tenant, id: id})-[m:MENTIONS]->(e:Entity)
RETURN id AS note_id, @entity_map AS entity, m.confidence AS confidence
ORDER BY id, e.mentions, e.key
