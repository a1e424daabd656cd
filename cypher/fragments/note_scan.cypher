// The exact k-NN over the tenant's notes that pass the filter, best first (ties by id); the same score scale
// as the vector index ((1 + cos) / 2). The variable is `node`, with its `score`.
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL AND node.embedding IS NOT NULL AND @note_filter
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
