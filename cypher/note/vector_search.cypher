// Approximate k-NN, over-fetched ($fetch > $k) then filtered; the store asks again with a larger
// $fetch, then falls back to note/vector_search_exact, when the filter leaves fewer than $k.
CALL db.index.vector.queryNodes('note_embedding', $fetch, $vector) YIELD node, score
WHERE @note_filter
WITH node, score
ORDER BY score DESC
LIMIT $k
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score
