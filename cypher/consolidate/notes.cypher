// One page of notes (every tenant: the vector index is the database's) with the text they are embedded from.
MATCH (n:Note)
WHERE n.id > $after
RETURN n.id AS id, n.content AS content, n.context AS context, n.keywords AS keywords, n.tags AS tags
ORDER BY n.id LIMIT $limit
