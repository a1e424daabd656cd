// The segments among $ids, as segment/candidates.cypher returns them: what a join or a promotion checks
// under the tenant lock (the centroid and keyword counts a join extends, the counters a claim compares);
// with $as_of, those held then.
UNWIND $ids AS id
MATCH (s:Segment {tenant: $tenant, id: id})
WHERE CASE WHEN $as_of IS NULL THEN $include_archived OR s.archived_at IS NULL
      ELSE s.created_at <= $as_of AND coalesce(s.archived_at > $as_of, true) END
WITH DISTINCT s
WITH s, CASE WHEN $vector IS NULL THEN null ELSE 2 * vector.similarity.cosine(s.embedding, $vector) - 1 END AS cosine
RETURN @segment_map AS segment, cosine, CASE WHEN $with_embedding THEN s.embedding END AS embedding
ORDER BY cosine DESC, s.id
LIMIT $limit
