// A tenant's entities, the most mentioned first.
MATCH (e:Entity {tenant: $tenant})
RETURN @entity_map AS entity
ORDER BY e.mentions DESC, e.key
SKIP $offset LIMIT $limit
