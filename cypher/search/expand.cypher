// The final ranking, in one round trip: the fused candidates ($candidates: [{id, score}]) and every note
// up to $hops (0-3) valid links (valid at $as_of when given) or session steps (NEXT, walked both ways) from the best of them
// ($seeds, a prefix of $candidates; only the first $deep_seeds go past one hop, which keeps the
// number of paths small). A path scores its seed's score times, per step, $decay × the weight
// of its type ($weights; a type without a weight is not followed) × the link's confidence; a note reached
// this way gains $speaker_prior if its speaker is one of $names, as the candidates already did. Each
// note keeps its best score and path (empty for a candidate); the best $limit are returned.
CALL () {
  UNWIND $candidates AS c
  MATCH (node:Note {tenant: $tenant, id: c.id})
  RETURN node, c.score AS score, null AS p
  UNION ALL
  UNWIND range(0, size($seeds) - 1) AS rank
  WITH $seeds[rank] AS s, rank
  MATCH (seed:Note {tenant: $tenant, id: s.id})
  CALL (seed, rank) {
    // One branch per length: a path's length cannot be a parameter, and a longer pattern filtered
    // afterwards would expand every path of the longest length first.
    WITH seed WHERE $hops >= 1
    MATCH p = (seed)-[:NEXT|RELATES_TO|ELABORATES|SUPPORTS|CONTRADICTS|FOLLOWS|SAME_ENTITY]-(:Note)
    RETURN p
    UNION ALL
    WITH seed WHERE $hops >= 2 AND rank < $deep_seeds
    MATCH p = (seed)-[:NEXT|RELATES_TO|ELABORATES|SUPPORTS|CONTRADICTS|FOLLOWS|SAME_ENTITY*2]-(:Note)
    RETURN p
    UNION ALL
    WITH seed WHERE $hops >= 3 AND rank < $deep_seeds
    MATCH p = (seed)-[:NEXT|RELATES_TO|ELABORATES|SUPPORTS|CONTRADICTS|FOLLOWS|SAME_ENTITY*3]-(:Note)
    RETURN p
  }
  WITH s, p, last(nodes(p)) AS node
  WHERE NOT node.id IN $seed_ids
    AND all(r IN relationships(p) WHERE $weights[type(r)] IS NOT NULL AND CASE
      WHEN $as_of IS NULL THEN r.invalid_at IS NULL
      WHEN type(r) = 'NEXT' THEN true  // a session step: the notes' recorded times decide
      ELSE size([bound IN @link_periods WHERE bound <= $as_of]) % 2 = 1 END)
    AND @note_filter
  RETURN node, s.score * reduce(w = 1.0, r IN relationships(p) | w * $decay * $weights[type(r)] * coalesce(r.confidence, 1.0))
       + CASE WHEN node.speaker IN $names THEN $speaker_prior ELSE 0.0 END AS score, p
}
WITH node, score, p
ORDER BY score DESC
WITH node, collect({score: score, p: p})[0] AS best
ORDER BY best.score DESC, node.id
LIMIT $limit
WITH node, best.score AS score, coalesce(nodes(best.p), []) AS steps, coalesce(relationships(best.p), []) AS rels
RETURN @note_map AS note, score, [i IN range(0, size(rels) - 1) | {
  from_id: steps[i].id,
  type: CASE WHEN type(rels[i]) = 'NEXT' AND startNode(rels[i]) <> steps[i] THEN 'PREVIOUS' ELSE type(rels[i]) END,
  reason: coalesce(rels[i].reason, ''), confidence: coalesce(rels[i].confidence, 1.0)
}] AS path
