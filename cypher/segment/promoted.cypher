// After a promotion: each note points at the page and the segment it came from, the pages are marked
// promoted, and the segment's counters start again (MemoryOS resets N_visit and L_interaction).
MATCH (s:Segment {tenant: $tenant, id: $segment_id})
SET s.visits = 0, s.interaction_len = 0, s.promoted_at = $now, s.promotions = s.promotions + 1
WITH s
CALL (s) {
  UNWIND $derived AS row
  MATCH (page:Page {tenant: $tenant, id: row.page_id})
  MATCH (note:Note {tenant: $tenant, id: row.note_id})
  MERGE (note)-[:DERIVED_FROM]->(page)
  MERGE (note)-[:DERIVED_FROM]->(s)
  SET page.promoted_at = $now
  RETURN count(*) AS linked
}
RETURN s.id AS id, linked
