// Every tenant that holds a node (a scan of the whole database: for `amem-graph check`, not a hot path).
MATCH (n)
WHERE n.tenant IS NOT NULL
RETURN DISTINCT n.tenant AS tenant
ORDER BY tenant
