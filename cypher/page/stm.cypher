// The short-term memory of a session: its pages not yet in a segment, oldest first (with their vectors when
// asked: what joining a segment needs).
MATCH (page:Page {tenant: $tenant, session_id: $session_id})
WHERE page.tier = 'stm'
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
WITH page, chain, null AS seg ORDER BY page.seq
RETURN @page_map AS page, CASE WHEN $with_embedding THEN page.embedding END AS embedding
