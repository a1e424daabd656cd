// The last page of a session, which a new turn follows, with its chain and its embedding and its chain's keywords (continuity).
MATCH (page:Page {tenant: $tenant, session_id: $session_id})
WITH page ORDER BY page.seq DESC LIMIT 1
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
RETURN @page_map AS page, page.embedding AS embedding, chain.keywords AS chain_keywords
