// A session's last $limit pages (with $stm, only those still short-term), oldest first: what a new turn
// follows (the last page's vector and chain, the turns before it) or what leaves for a segment. With $as_of,
// the pages recorded by then, short-term then with $stm (timeline.tier_held and short_term_at).
MATCH (page:Page {tenant: $tenant, session_id: $session_id})
WHERE page.seq IS NOT NULL AND CASE WHEN $as_of IS NULL THEN NOT $stm OR page.tier = 'stm'
      ELSE page.created_at <= $as_of AND (NOT $stm OR page.joined_at IS NULL OR page.joined_at > $as_of) END
WITH page ORDER BY page.seq DESC SKIP $offset LIMIT $limit
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
WITH page, chain, seg ORDER BY page.seq
RETURN @page_map AS page, CASE WHEN $with_embedding THEN page.embedding END AS embedding
