// The tenants whose name starts with $prefix that hold keyed notes (LangGraph namespaces below a root); with
// $as_of, those that held one then. A prefix seek of the (tenant, created_at) index reads the notes of those
// tenants only, where attached/keyed_tenants reads every item of the database.
MATCH (node:Note)
USING INDEX node:Note(tenant, created_at)
WHERE node.tenant STARTS WITH $prefix AND node.created_at IS NOT NULL
  AND node.store_key IS NOT NULL AND @attached_by_then = 'item'
RETURN DISTINCT node.tenant AS tenant
ORDER BY tenant
