// The tenant's $k pages closest to $vector, exactly (cosine −1..1): pages are scanned per tenant rather than
// through a shared vector index, which a tenant filter would make over-fetch. With $as_of, the pages recorded by then.
MATCH (page:Page {tenant: $tenant})
WHERE page.created_at IS NOT NULL AND ($as_of IS NULL OR page.created_at <= $as_of)
WITH page, 2 * vector.similarity.cosine(page.embedding, $vector) - 1 AS score
ORDER BY score DESC
LIMIT $k
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
RETURN @page_map AS page, score
