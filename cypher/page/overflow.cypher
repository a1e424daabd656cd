// The STM pages of a session beyond the newest $capacity, oldest first, with what joining a segment needs.
MATCH (page:Page {tenant: $tenant, session_id: $session_id})
WHERE page.tier = 'stm'
WITH page ORDER BY page.seq DESC SKIP $capacity
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
WITH page, chain, null AS seg ORDER BY page.seq
RETURN @page_map AS page, page.embedding AS embedding
