// For each entity of $keys, taken as the entity it was merged into if it was, the newest $limit notes that
// mention it or an entity merged into it and pass the filter (@note_filter), as brief notes (@note_brief)
// with the mention's confidence and the entity. Merges are one level deep (entities.lookup keeps them so).
UNWIND $keys AS key
MATCH (named:Entity {tenant: $tenant, key: key})
OPTIONAL MATCH (named)-[:ALIAS_OF]->(into:Entity)
WITH DISTINCT coalesce(into, named) AS e
CALL (e) {
  MATCH (alias:Entity)-[:ALIAS_OF*0..1]->(e)
  MATCH (node:Note)-[m:MENTIONS]->(alias)
  WHERE @note_filter
  WITH node, max(m.confidence) AS confidence
  RETURN node, confidence
  ORDER BY node.created_at DESC
  LIMIT $limit
}
RETURN @entity_map AS entity, @note_brief AS note, confidence
