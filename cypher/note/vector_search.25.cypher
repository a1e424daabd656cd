// Cypher 25 (Neo4j 2026.01+, an index created by schema/050_note_embedding.25): approximate k-NN over the
// tenant's notes only, the tenant filtered inside the index; the rest of the filter applies after, over-fetched
// and counted (`matched`), and the candidates scored again exactly, as in note/vector_search.
CYPHER 25
MATCH (node:Note)
  SEARCH node IN (VECTOR INDEX note_embedding FOR $vector WHERE node.tenant = $tenant LIMIT $fetch)
WHERE @note_filter
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score ORDER BY score DESC, node.id
WITH collect({node: node, score: score}) AS hits
UNWIND hits[0..$k] AS hit
WITH hit.node AS node, hit.score AS score, size(hits) AS matched
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, matched
