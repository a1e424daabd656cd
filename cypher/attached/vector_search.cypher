// Exact cosine (normalised to [0, 1], as the index scores) over the vectors a caller's own embedding
// model made for this tenant's notes of one adapter (superseded ones only with $superseded; archived ones never).
MATCH (node:Note {tenant: $tenant})
WHERE node.attached_by = $kind AND node.external_vector IS NOT NULL AND size(node.external_vector) = size($vector)
  AND ($superseded OR node.invalid_at IS NULL) AND node.archived_at IS NULL
WITH node, vector.similarity.cosine(node.external_vector, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
RETURN @attached_map, score
