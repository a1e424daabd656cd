// The merges into the entity $key: each alias with when, why and by whom it was merged.
MATCH (alias:Entity)-[r:ALIAS_OF]->(:Entity {tenant: $tenant, key: $key})
RETURN alias.key AS alias, r.at.epochMillis AS at, r.reason AS reason, r.by AS by
ORDER BY r.at, alias.key
