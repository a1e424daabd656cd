// The $k pages of each segment closest to the query vector (cosine −1..1).
UNWIND $segment_ids AS segment_id
MATCH (seg:Segment {tenant: $tenant, id: segment_id})-[:HAS_PAGE]->(page:Page)
WITH seg, page, 2 * vector.similarity.cosine(page.embedding, $vector) - 1 AS cosine
ORDER BY cosine DESC
WITH seg, collect({page: page, cosine: cosine})[..$k] AS best
UNWIND best AS hit
WITH seg, hit.page AS page, hit.cosine AS cosine
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
RETURN seg.id AS segment_id, @page_map AS page, cosine
ORDER BY segment_id, cosine DESC
