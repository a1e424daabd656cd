// The names a tenant's speakers are called by (search/speaker_calls) are read from the few notes that call one.
CREATE RANGE INDEX note_tenant_called IF NOT EXISTS FOR (n:Note) ON (n.tenant, n.called)
