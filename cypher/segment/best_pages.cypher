// The $k pages of each segment closest to the query vector (cosine −1..1); with $as_of, of the pages that
// had joined it by then.
UNWIND $segment_ids AS segment_id
MATCH (seg:Segment {tenant: $tenant, id: segment_id})-[:HAS_PAGE]->(page:Page)
WHERE $as_of IS NULL OR page.joined_at <= $as_of
WITH seg, page, 2 * vector.similarity.cosine(page.embedding, $vector) - 1 AS score
ORDER BY score DESC
WITH seg, collect({page: page, score: score})[..$k] AS best
UNWIND best AS hit
WITH seg, hit.page AS page, hit.score AS score
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
RETURN @page_map AS page, score
ORDER BY seg.id, score DESC
