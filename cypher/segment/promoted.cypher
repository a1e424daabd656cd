// After a claimed promotion wrote its notes: each note points at the page and the segment it came from, and
// the pages are marked promoted (a later promotion of the segment takes only the pages not marked).
MATCH (s:Segment {tenant: $tenant, id: $segment_id})
UNWIND $derived AS row
MATCH (page:Page {tenant: $tenant, id: row.page_id})
MATCH (note:Note {tenant: $tenant, id: row.note_id})
MERGE (note)-[:DERIVED_FROM]->(page)
MERGE (note)-[:DERIVED_FROM]->(s)
SET page.promoted_at = $now
RETURN count(*) AS linked
