// The entity $key is no longer merged into another; returns the key it was merged into, if it was. The merge
// is kept as a WAS_ALIAS_OF with when it ended, not erased: reads as of a past moment still see it held then.
MATCH (alias:Entity {tenant: $tenant, key: $key})-[r:ALIAS_OF]->(into:Entity)
CREATE (alias)-[:WAS_ALIAS_OF {at: r.at, ended_at: $now, reason: r.reason, by: r.by}]->(into)
WITH r, into.key AS into
DELETE r
RETURN into
