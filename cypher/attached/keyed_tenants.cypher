// The tenants that hold keyed notes (LangGraph namespaces), read from the store_key index.
MATCH (n:Note)
WHERE n.store_key IS NOT NULL AND n.attached_by = 'item'
RETURN DISTINCT n.tenant AS tenant
ORDER BY tenant
