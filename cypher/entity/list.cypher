// A tenant's entities, the most mentioned first; one merged into another is listed under it (`merged`); a topic
// only once $least_topic_mentions notes mention it (entities/topics.py); one no note mentions (kept for a merge
// it took part in) not at all.
MATCH (e:Entity {tenant: $tenant})
WHERE e.key IS NOT NULL AND NOT (e)-[:ALIAS_OF]->(:Entity) AND e.mentions > 0
  AND (e.kind <> 'topic' OR e.mentions >= $least_topic_mentions)
RETURN @entity_map AS entity
ORDER BY e.mentions DESC, e.key
SKIP $offset LIMIT $limit
