// One page of passages (every tenant) with their span and their note's content, which holds their text.
MATCH (n:Note)-[:HAS_PASSAGE]->(p:Passage)
WHERE p.id > $after
RETURN p.id AS id, p.start AS start, p.end AS end, n.content AS content
ORDER BY p.id LIMIT $limit
