// Cypher 25 (Neo4j 2026.01+, the index of schema/260_passage_embedding.25): passages of the tenant only, the
// tenant filtered inside the index; the rest of the filter applies to their notes after, as in
// note/passage_search.
CYPHER 25
MATCH (passage:Passage)
  SEARCH passage IN (VECTOR INDEX passage_embedding FOR $vector WHERE passage.tenant = $tenant LIMIT $fetch)
  SCORE AS score
MATCH (node:Note)-[:HAS_PASSAGE]->(passage)
WHERE @note_filter
WITH node, passage, score ORDER BY score DESC
WITH collect({node: node, score: score, start: passage.start, end: passage.end}) AS hits
UNWIND hits[0..$k] AS hit
WITH hit.node AS node, hit.score AS score, hit.start AS start, hit.end AS end, size(hits) AS matched
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, start, end, matched
