// Approximate k-NN, over-fetched then filtered by tenant; the store falls back to
// note/vector_search_exact when the filter leaves fewer than $k.
CALL db.index.vector.queryNodes('note_embedding', $fetch, $vector) YIELD node, score
WHERE node.tenant = $tenant AND ($include_invalid OR node.invalid_at IS NULL)
RETURN node {.*, embedding: null} AS note, score
ORDER BY score DESC
LIMIT $k
