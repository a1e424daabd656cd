// One page of dialogue pages (every tenant) with both sides.
MATCH (p:Page)
WHERE p.id > $after
RETURN p.id AS id, p.user_text AS user_text, p.assistant_text AS assistant_text
ORDER BY p.id LIMIT $limit
