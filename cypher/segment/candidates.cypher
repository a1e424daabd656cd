// The tenant's active segments with their heat at $now and, given $vector, their cosine to it (−1..1;
// Neo4j's vector.similarity.cosine is (1 + cosine) / 2). Exact: at most AMEM_SEGMENT_CAPACITY are active.
MATCH (s:Segment {tenant: $tenant})
WHERE $include_archived OR s.archived_at IS NULL
WITH s, @segment_heat AS heat,
     CASE WHEN $vector IS NULL THEN null ELSE 2 * vector.similarity.cosine(s.embedding, $vector) - 1 END AS cosine
RETURN @segment_map AS segment, heat, cosine
ORDER BY coalesce(cosine, heat) DESC
LIMIT $limit
