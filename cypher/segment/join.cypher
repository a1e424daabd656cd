// A page leaves the STM for a segment, new or existing, in one transaction. An existing segment must still
// be active and hold $expected_pages (`current`), and the page must still be short-term (`waiting`: another
// writer may have moved it); else nothing is written and the caller reads again or stops. Joining counts
// as interaction and touches the segment.
@tenant_lock
MATCH (page:Page {tenant: $tenant, id: $page_id})
OPTIONAL MATCH (old:Segment {tenant: $tenant, id: $segment.id})
WITH page, page.tier = 'stm' AS waiting,
     ($expected_pages IS NULL AND old IS NULL)
     OR coalesce(old.pages = $expected_pages AND old.archived_at IS NULL, false) AS current
CALL (page, waiting, current) {
  WITH page WHERE waiting AND current
  MERGE (s:Segment {tenant: $tenant, id: $segment.id})
  ON CREATE SET s.created_at = $now, s.pages = 0, s.visits = 0, s.interaction_len = 0, s.promotions = 0
  SET s.summary = $segment.summary, s.keywords = $segment.keywords, s.keyword_counts = $segment.keyword_counts,
      s.analysis = $segment.analysis, s.model = $segment.model, s.pages = s.pages + 1,
      s.interaction_len = s.interaction_len + 1, s.last_access = $now, s.updated_at = $now,
      page.tier = 'mtm', page.joined_at = $now
  CREATE (s)-[:HAS_PAGE]->(page)
  WITH s
  CALL db.create.setNodeVectorProperty(s, 'embedding', $embedding)
}
RETURN waiting, current
