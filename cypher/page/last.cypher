// The last page of a session, which a new turn follows: its embedding and its chain's keywords (continuity),
// and the two last pages' sides, oldest first (the new page's neighbourhood).
MATCH (page:Page {tenant: $tenant, session_id: $session_id})
WITH page ORDER BY page.seq DESC LIMIT 1
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (before:Page)-[:NEXT]->(page)
RETURN @page_map AS page, page.embedding AS embedding, chain.keywords AS chain_keywords,
       [p IN [before, page] WHERE p IS NOT NULL | [p.user_text, p.assistant_text]] AS window
