// Exact cosine over the engine's vectors of one adapter's notes (and, with $plain, notes no adapter
// owns), superseded ones only with $superseded, archived ones never: what an adapter search falls back to when the shared
// vector index, which cannot filter while it searches, returned too few of them.
MATCH (node:Note {tenant: $tenant})
WHERE node.embedding IS NOT NULL AND (node.attached_by = $kind OR ($plain AND node.attached_by IS NULL))
  AND ($superseded OR node.invalid_at IS NULL) AND node.archived_at IS NULL
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
RETURN @attached_map, score
