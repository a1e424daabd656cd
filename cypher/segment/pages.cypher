// A segment's pages in dialogue order; with $unpromoted, only those no promotion has turned into notes yet;
// with $as_of, those that had joined it by then.
MATCH (seg:Segment {tenant: $tenant, id: $id})-[:HAS_PAGE]->(page:Page)
WHERE (NOT $unpromoted OR page.promoted_at IS NULL) AND ($as_of IS NULL OR page.joined_at <= $as_of)
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
WITH page, chain, seg ORDER BY page.session_id, page.seq
SKIP $offset LIMIT $limit
RETURN @page_map AS page, CASE WHEN $with_embedding THEN page.embedding END AS embedding
