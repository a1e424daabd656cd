// The tenant's notes that kept versions of their neighbourhood alone (releases before schema 10), once: their
// ids, which the upgrade then folds a batch at a time (store/upgrade.py).
MATCH (n:Note {tenant: $tenant})-[:HAS_VERSION]->(v:NoteVersion)
WHERE v.reason STARTS WITH 'neighbourhood: '
RETURN DISTINCT n.id AS id
ORDER BY id
