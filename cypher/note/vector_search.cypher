// Approximate k-NN, over-fetched ($fetch > $k) then filtered; `matched` (how many of the $fetch passed
// the filter) lets the store size the next over-fetch, and ask again here, then fall back to
// note/vector_search_exact, when fewer than $k passed. The index ranks by quantized vectors: the candidates
// are scored again exactly (as note/vector_search_exact scores), so the k best of them come back.
CALL db.index.vector.queryNodes('note_embedding', $fetch, $vector) YIELD node
WHERE @note_filter
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score ORDER BY score DESC, node.id
WITH collect({node: node, score: score}) AS hits
UNWIND hits[0..$k] AS hit
WITH hit.node AS node, hit.score AS score, size(hits) AS matched
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, matched
