// Exact cosine over the tenant's passages whose notes pass the filter; the index's score scale.
MATCH (passage:Passage {tenant: $tenant})<-[:HAS_PASSAGE]-(node:Note)
WHERE @note_filter
WITH node, passage, vector.similarity.cosine(passage.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, passage.start AS start,
       passage.end AS end
