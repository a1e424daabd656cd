// One page of a tenant's nodes for `amem-graph export`: labels and every property (embeddings included).
MATCH (n)
WHERE n.tenant = $tenant
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
ORDER BY key
SKIP $offset LIMIT $limit
