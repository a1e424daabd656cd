// The entity $key is merged into $into: recorded as (alias)-[:ALIAS_OF {at, reason, by}]->(into), which
// is all a merge changes (the mentions stay as written, so unalias undoes it exactly). Returns the merge.
// An unmerge keeps the merge as a WAS_ALIAS_OF (unalias.cypher), so merging again makes a fresh ALIAS_OF.
MATCH (alias:Entity {tenant: $tenant, key: $key}), (into:Entity {tenant: $tenant, key: $into})
MERGE (alias)-[r:ALIAS_OF]->(into)
ON CREATE SET r.at = $now, r.reason = $reason, r.by = $by
RETURN alias.key AS key
