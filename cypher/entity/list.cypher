// A tenant's entities, the most mentioned first; one merged into another is listed under it (`merged`).
MATCH (e:Entity {tenant: $tenant})
WHERE e.key IS NOT NULL AND NOT (e)-[:ALIAS_OF]->(:Entity)
RETURN @entity_map AS entity
ORDER BY e.mentions DESC, e.key
SKIP $offset LIMIT $limit
