// Every page of a tenant in dialogue order (session, then seq), a page at a time for exports and benchmarks.
MATCH (page:Page {tenant: $tenant})
WHERE page.created_at IS NOT NULL
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
WITH page, chain, seg ORDER BY page.session_id, page.seq
SKIP $offset LIMIT $limit
RETURN @page_map AS page, CASE WHEN $with_embedding THEN page.embedding END AS embedding
