// Valid notes whose derived fields came from one of $kinds, oldest first (what reanalyze upgrades).
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL AND node.analysis IN $kinds AND node.invalid_at IS NULL
RETURN @note_map AS note
ORDER BY node.created_at, node.id
LIMIT $limit
