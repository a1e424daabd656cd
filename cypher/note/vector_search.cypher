// Approximate k-NN, over-fetched ($fetch > $k) then filtered by tenant; the store asks again with a
// larger $fetch, then falls back to note/vector_search_exact, when the filter leaves fewer than $k.
CALL db.index.vector.queryNodes('note_embedding', $fetch, $vector) YIELD node, score
WHERE node.tenant = $tenant AND ($include_invalid OR node.invalid_at IS NULL)
WITH node, score
ORDER BY score DESC
LIMIT $k
RETURN @note_map AS note, score
