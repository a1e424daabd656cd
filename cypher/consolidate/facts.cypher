// One page of persona facts (every tenant) with their text.
MATCH (f:Fact)
WHERE f.id > $after
RETURN f.id AS id, f.text AS text
ORDER BY f.id LIMIT $limit
