// The tenant's most recent session, when a context is asked for without one.
CREATE RANGE INDEX page_tenant_created IF NOT EXISTS FOR (p:Page) ON (p.tenant, p.created_at)
