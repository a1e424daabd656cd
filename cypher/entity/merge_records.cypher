// Every merge of the tenant's entities, held (ALIAS_OF) or ended by an unmerge (WAS_ALIAS_OF, with ended_at),
// oldest first: what entities.as_of reads a moment's merges from.
// The key test lets the (tenant, key) index serve the seek; the hint keeps the planner from starting at `into`
// (a scan of every tenant's entities) when the statistics say few entities were merged.
MATCH (alias:Entity {tenant: $tenant})-[r:ALIAS_OF|WAS_ALIAS_OF]->(into:Entity)
USING INDEX alias:Entity(tenant, key)
WHERE alias.key IS NOT NULL
RETURN alias.key AS alias, into.key AS into, r.at.epochMillis AS at, r.ended_at.epochMillis AS ended_at,
  r.reason AS reason, r.by AS by
ORDER BY r.at, alias.key, ended_at
