// Cypher 25 (Neo4j 2026.01+, the index of schema/260_passage_embedding.25): passages of the tenant only, the
// tenant filtered inside the index; the rest of the filter applies to their notes after, and each note comes
// once with its best passage, scored again exactly, as in note/passage_search.
CYPHER 25
MATCH (passage:Passage)
  SEARCH passage IN (VECTOR INDEX passage_embedding FOR $vector WHERE passage.tenant = $tenant LIMIT $fetch)
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
