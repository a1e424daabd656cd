// Exact cosine (normalised to [0, 1], as the index scores) over the vectors a caller's own embedding
// model made for this tenant's notes of one adapter (superseded ones only with $include_invalid; archived ones
// never). With $as_of (recorded time), the notes held then, owned, superseded and archived as they were then;
// the vectors are today's.
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL AND @attached_by_then = $kind AND node.external_vector IS NOT NULL AND size(node.external_vector) = size($vector)
  AND @note_filter
WITH node, vector.similarity.cosine(node.external_vector, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
RETURN @attached_map, score
