MATCH (n:Note {id: $id, tenant: $tenant})
CALL (n) {
  OPTIONAL MATCH (n)-[r]-(:Note)
  WHERE type(r) IN $link_types
  RETURN collect(CASE WHEN r IS NOT NULL THEN {
    source_id: startNode(r).id, target_id: endNode(r).id, type: type(r), reason: r.reason,
    confidence: r.confidence, created_at: r.created_at, invalid_at: r.invalid_at
  } END) AS links
}
RETURN n {.*, embedding: null} AS note, links, CASE WHEN $with_embedding THEN n.embedding END AS embedding
