// The entity $key is no longer merged into another; returns the key it was merged into, if it was.
MATCH (:Entity {tenant: $tenant, key: $key})-[r:ALIAS_OF]->(into:Entity)
WITH r, into.key AS into
DELETE r
RETURN into
