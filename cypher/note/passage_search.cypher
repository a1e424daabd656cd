// Approximate k-NN over long notes' passages, over-fetched and filtered by their notes as note/vector_search
// is; each note once, with its best passage's score and span (a long note has many passages near the query:
// sending its content per passage would multiply the rows' size). `matched` counts the notes whose passages
// passed (fewer than k: the read widens, then scans), which sizes the next over-fetch. Passages are scored again
// exactly, as notes are.
CALL db.index.vector.queryNodes('passage_embedding', $fetch, $vector) YIELD node AS passage
WHERE passage.tenant = $tenant
MATCH (node:Note)-[:HAS_PASSAGE]->(passage)
WHERE @note_filter
WITH node, passage, vector.similarity.cosine(passage.embedding, $vector) AS score ORDER BY score DESC
WITH node, collect({score: score, start: passage.start, end: passage.end})[0] AS best
ORDER BY best.score DESC
WITH collect({node: node, best: best}) AS hits
WITH hits, size(hits) AS matched
UNWIND hits[0..$k] AS hit
WITH hit.node AS node, hit.best AS best, matched
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, best.score AS score, best.start AS start,
       best.end AS end, matched
