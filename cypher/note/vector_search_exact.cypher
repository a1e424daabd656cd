// Exact cosine over the tenant's notes; same score scale as the index ((1 + cos) / 2).
MATCH (node:Note {tenant: $tenant})
WHERE node.embedding IS NOT NULL AND ($include_invalid OR node.invalid_at IS NULL)
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN @note_map AS note, score
