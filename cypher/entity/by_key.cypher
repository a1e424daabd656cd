// Entities by key, in the order asked (missing keys are absent).
UNWIND range(0, size($keys) - 1) AS i
MATCH (e:Entity {tenant: $tenant, key: $keys[i]})
RETURN @entity_map AS entity
ORDER BY i
