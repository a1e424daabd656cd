// Lucene BM25 over the tenant's pages; $query is built by the store from the user's words only
// (store/neo4j.py lucene_query), never raw user syntax. With $as_of, the pages recorded by then.
CALL db.index.fulltext.queryNodes('page_text', $query) YIELD node AS page, score
WHERE page.tenant = $tenant AND ($as_of IS NULL OR page.created_at <= $as_of)
WITH page, score
LIMIT $k
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
RETURN @page_map AS page, score
