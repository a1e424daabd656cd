// Approximate k-NN over long notes' passages, over-fetched and filtered by their notes as note/vector_search
// is (`matched` sizes the next over-fetch); each row is a passage with its note and its span.
CALL db.index.vector.queryNodes('passage_embedding', $fetch, $vector) YIELD node AS passage, score
WHERE passage.tenant = $tenant
MATCH (node:Note)-[:HAS_PASSAGE]->(passage)
WHERE @note_filter
WITH collect({node: node, score: score, start: passage.start, end: passage.end}) AS hits
UNWIND hits[0..$k] AS hit
WITH hit.node AS node, hit.score AS score, hit.start AS start, hit.end AS end, size(hits) AS matched
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, start, end, matched
