// An entity as returned to callers; the statement binds `e`. Times as epoch milliseconds (see note_map);
// alias_of and merged: the entity it was merged into, and those merged into it (ALIAS_OF).
e {.tenant, .key, .name, .kind, .aliases, .mentions, first_seen: e.first_seen.epochMillis,
   last_seen: e.last_seen.epochMillis, alias_of: head([(e)-[:ALIAS_OF]->(into:Entity) | into.key]),
   merged: [(alias:Entity)-[:ALIAS_OF]->(e) | alias.key]}
