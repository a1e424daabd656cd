// Taken first by every statement that creates, changes or deletes notes: writers of one tenant take turns,
// so a version read under the lock stays true until commit (TenantLock.tenant is unique: MERGE locks one node).
MERGE (lock:TenantLock {tenant: $tenant})
SET lock.writes = coalesce(lock.writes, 0) + 1
WITH lock
