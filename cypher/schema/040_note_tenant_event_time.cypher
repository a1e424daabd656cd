CREATE RANGE INDEX note_tenant_event_time IF NOT EXISTS FOR (n:Note) ON (n.tenant, n.event_time)
