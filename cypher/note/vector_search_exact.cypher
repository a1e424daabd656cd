// Exact cosine over the tenant's notes that pass the filter; same score scale as the index ((1 + cos) / 2).
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL AND node.embedding IS NOT NULL AND @note_filter
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score
