// Exact cosine over the tenant's passages whose notes pass the filter, on the index's score scale; each note
// once, with its best passage (as note/passage_search).
MATCH (passage:Passage {tenant: $tenant})<-[:HAS_PASSAGE]-(node:Note)
WHERE @note_filter
WITH node, passage, vector.similarity.cosine(passage.embedding, $vector) AS score
ORDER BY score DESC
WITH node, collect({score: score, start: passage.start, end: passage.end})[0] AS best
ORDER BY best.score DESC
LIMIT $k
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, best.score AS score, best.start AS start,
       best.end AS end
