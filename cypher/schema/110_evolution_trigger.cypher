CREATE INDEX evolution_tenant_trigger IF NOT EXISTS FOR (e:Evolution) ON (e.tenant, e.trigger_note_id)
