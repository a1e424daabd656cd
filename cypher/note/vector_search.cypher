// Approximate k-NN, over-fetched ($fetch > $k) then filtered; `matched` (how many of the $fetch passed
// the filter) lets the store size the next over-fetch, and ask again here, then fall back to
// note/vector_search_exact, when fewer than $k passed.
CALL db.index.vector.queryNodes('note_embedding', $fetch, $vector) YIELD node, score
WHERE @note_filter
WITH collect({node: node, score: score}) AS hits
UNWIND hits[0..$k] AS hit
WITH hit.node AS node, hit.score AS score, size(hits) AS matched
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, matched
