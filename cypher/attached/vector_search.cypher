// Exact cosine over the vectors a caller's own embedding model made for this tenant's notes.
MATCH (node:Note {tenant: $tenant})
WHERE node.external_vector IS NOT NULL AND size(node.external_vector) = size($vector)
WITH node, vector.similarity.cosine(node.external_vector, $vector) AS score
ORDER BY score DESC, node.id
LIMIT $k
RETURN @note_map AS note, node.attached AS attached, node.store_key AS store_key, score
