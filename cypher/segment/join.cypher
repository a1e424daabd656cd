// A page leaves the STM for a segment, new or existing (whether it still may, the engine checked under the
// tenant lock). Joining counts as interaction and touches the segment.
MATCH (page:Page {tenant: $tenant, id: $page_id})
MERGE (s:Segment {tenant: $tenant, id: $segment.id})
ON CREATE SET s.created_at = $now, s.pages = 0, s.visits = 0, s.interaction_len = 0, s.promotions = 0
SET s.summary = $segment.summary, s.keywords = $segment.keywords, s.keyword_counts = $segment.keyword_counts,
    s.analysis = $segment.analysis, s.model = $segment.model, s.pages = s.pages + 1,
    s.interaction_len = s.interaction_len + 1, s.last_access = $now, s.updated_at = $now,
    page.tier = 'mtm', page.joined_at = $now
CREATE (s)-[:HAS_PAGE]->(page)
WITH s
CALL (s) {
  CALL db.create.setNodeVectorProperty(s, 'embedding', $embedding)
}
RETURN s.id AS id
