// One page of a tenant's relationships for `amem-graph export` (every relationship joins two nodes of one tenant).
MATCH (a)-[r]->(b)
WHERE a.tenant = $tenant
RETURN elementId(a) AS start, type(r) AS type, elementId(b) AS end, properties(r) AS props
ORDER BY elementId(r)
SKIP $offset LIMIT $limit
