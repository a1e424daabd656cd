// One page of a tenant's nodes for `amem-graph export`: labels and every property (embeddings included). The
// tenant's BM25 statistics (Term, Corpus) are derived from its notes and pages, and counted again on import.
MATCH (n)
WHERE n.tenant = $tenant AND NOT n:Term AND NOT n:Corpus
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
ORDER BY key
SKIP $offset LIMIT $limit
