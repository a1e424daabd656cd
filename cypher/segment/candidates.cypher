// The tenant's segments (active ones unless $include_archived) and, given $vector, their cosine to it
// (−1..1; Neo4j's vector.similarity.cosine is (1 + cosine) / 2), best first. Exact: at most
// AMEM_SEGMENT_CAPACITY are active. Heat is the engine's to compute from the counters. With $as_of, the
// segments held then (timeline.tier_held), archived since or not.
MATCH (s:Segment {tenant: $tenant})
WHERE CASE WHEN $as_of IS NULL THEN $include_archived OR s.archived_at IS NULL
      ELSE s.created_at <= $as_of AND coalesce(s.archived_at > $as_of, true) END
WITH s, CASE WHEN $vector IS NULL THEN null ELSE 2 * vector.similarity.cosine(s.embedding, $vector) - 1 END AS cosine
RETURN @segment_map AS segment, cosine, CASE WHEN $with_embedding THEN s.embedding END AS embedding
ORDER BY cosine DESC, s.id
LIMIT $limit
