CREATE RANGE INDEX note_tenant_created IF NOT EXISTS FOR (n:Note) ON (n.tenant, n.created_at)
