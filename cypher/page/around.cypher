// The pages up to $width before and after each of $ids in its session (itself included, each page once), by
// session and seq: the dialogue neighbourhood a note promoted from a page carries, as notes of a session do.
// Seqs are the NEXT chain's steps (a session's pages are numbered 1, 2, ... and never deleted alone).
UNWIND $ids AS id
MATCH (centre:Page {tenant: $tenant, id: id})
MATCH (page:Page {tenant: $tenant, session_id: centre.session_id})
WHERE page.seq >= centre.seq - $width AND page.seq <= centre.seq + $width
WITH DISTINCT page
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
WITH page, chain, seg ORDER BY page.session_id, page.seq
SKIP $offset LIMIT $limit
RETURN @page_map AS page, CASE WHEN $with_embedding THEN page.embedding END AS embedding
