// A tenant's LangGraph store items (its keyed notes) are read through this index, not through every tenant's.
CREATE INDEX note_tenant_store_key IF NOT EXISTS FOR (n:Note) ON (n.tenant, n.store_key)
