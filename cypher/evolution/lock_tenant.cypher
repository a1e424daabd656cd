// The first statement of every evolution: analysed writes of one tenant take turns, so a version
// read after it stays true until commit (TenantLock.tenant is unique, so MERGE locks one node).
MERGE (l:TenantLock {tenant: $tenant})
SET l.writes = coalesce(l.writes, 0) + 1
