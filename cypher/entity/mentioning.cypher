// For each entity of $keys, the newest $limit notes that mention it and pass the filter
// (@note_filter), as brief notes (@note_brief) with the mention's confidence and the entity.
UNWIND $keys AS key
MATCH (e:Entity {tenant: $tenant, key: key})
CALL (e) {
  MATCH (node:Note)-[m:MENTIONS]->(e)
  WHERE @note_filter
  RETURN node, m.confidence AS confidence
  ORDER BY node.created_at DESC
  LIMIT $limit
}
RETURN @entity_map AS entity, @note_brief AS note, confidence
