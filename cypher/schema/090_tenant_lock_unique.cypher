CREATE CONSTRAINT tenant_lock_unique IF NOT EXISTS
FOR (l:TenantLock) REQUIRE l.tenant IS UNIQUE
