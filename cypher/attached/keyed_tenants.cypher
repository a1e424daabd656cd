// The tenants that hold keyed notes (LangGraph namespaces), read from the store_key index; with $as_of, those
// that held one then.
MATCH (node:Note)
WHERE node.store_key IS NOT NULL AND @attached_by_then = 'item'
RETURN DISTINCT node.tenant AS tenant
ORDER BY tenant
