// A tenant's entities, the most mentioned first; one merged into another is listed under it (`merged`); a topic
// only once $least_topic_mentions notes mention it (entities/topics.py).
MATCH (e:Entity {tenant: $tenant})
WHERE e.key IS NOT NULL AND NOT (e)-[:ALIAS_OF]->(:Entity)
  AND (e.kind <> 'topic' OR e.mentions >= $least_topic_mentions)
RETURN @entity_map AS entity
ORDER BY e.mentions DESC, e.key
SKIP $offset LIMIT $limit
