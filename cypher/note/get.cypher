// Notes by id, in the order asked (missing ids are absent), with their links and vectors when asked.
UNWIND range(0, size($ids) - 1) AS i
MATCH (node:Note {id: $ids[i], tenant: $tenant})
CALL (node) {
  WITH node WHERE $links
  OPTIONAL MATCH (node)-[r]-(:Note)
  WHERE type(r) IN $link_types
  RETURN collect(CASE WHEN r IS NOT NULL THEN {
    source_id: startNode(r).id, target_id: endNode(r).id, type: type(r), reason: r.reason,
    confidence: r.confidence, created_at: r.created_at.epochMillis, invalid_at: r.invalid_at.epochMillis,
    periods: [bound IN @link_periods | bound.epochMillis]
  } END) AS links
}
RETURN @note_map AS note, links, CASE WHEN $with_embedding THEN node.embedding END AS embedding
ORDER BY i
