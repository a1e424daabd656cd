// The persona facts a context may use (of $kinds, or all), with the pages and segments they came from;
// given $vector, ranked by cosine to it (−1..1) and cut to $limit.
MATCH (f:Fact {tenant: $tenant})
WHERE f.kind IS NOT NULL AND @fact_scope AND ($kinds IS NULL OR f.kind IN $kinds)
OPTIONAL MATCH (f)-[:DERIVED_FROM]->(source)
WITH f, collect(DISTINCT CASE WHEN source:Page THEN source.id END) AS pages,
     collect(DISTINCT CASE WHEN source:Segment THEN source.id END) AS segments,
     CASE WHEN $vector IS NULL THEN null ELSE 2 * vector.similarity.cosine(f.embedding, $vector) - 1 END AS cosine
RETURN @fact_map AS fact, pages, segments, cosine, CASE WHEN $with_embedding THEN f.embedding END AS embedding
ORDER BY coalesce(cosine, 0) DESC, f.kind, f.created_at
LIMIT $limit
