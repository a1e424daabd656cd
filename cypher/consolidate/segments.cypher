// One page of segments (every tenant) with their pages' vectors: a segment's is their mean, as when pages
// join it.
MATCH (s:Segment)-[:HAS_PAGE]->(p:Page)
WHERE s.id > $after AND p.embedding IS NOT NULL
WITH s, collect(p.embedding) AS pages
RETURN s.id AS id, pages
ORDER BY id LIMIT $limit
