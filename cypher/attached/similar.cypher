// Exact cosine over the engine's vectors of one adapter's notes (and, with $plain, notes no adapter
// owns), superseded ones only with $include_invalid, archived ones never: what an adapter search falls back to
// when the shared vector index, which cannot filter while it searches, returned too few of them. With $as_of
// (recorded time), the notes held then, owned, superseded and archived as they were then.
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL
WITH node, @attached_by_then AS owner
WHERE node.embedding IS NOT NULL AND (owner = $kind OR ($plain AND owner IS NULL)) AND @note_filter
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
RETURN @attached_map, score
