// The tenant's notes that kept versions of their neighbourhood alone (releases before schema 10), once: their
// ids, which the upgrade then folds a batch at a time (store/upgrade.py). Read through the tenant's index (the hint:
// the planner may prefer a scan of every tenant's versions when they are few).
MATCH (n:Note)
USING INDEX n:Note(tenant, created_at)
WHERE n.tenant = $tenant AND n.created_at IS NOT NULL
MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
WHERE v.reason STARTS WITH 'neighbourhood: '
RETURN DISTINCT n.id AS id
ORDER BY id
