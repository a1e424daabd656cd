// A fact derived again: one more mention, its confidence (the tiers keep the higher), and the new page and
// segment as sources.
UNWIND $rows AS row
MATCH (f:Fact {tenant: $tenant, id: row.existing_id})
MATCH (s:Segment {tenant: $tenant, id: $segment_id})
MATCH (page:Page {tenant: $tenant, id: row.page_id})
SET f.mentions = f.mentions + 1, f.confidence = row.confidence, f.updated_at = $now
MERGE (f)-[:DERIVED_FROM]->(s)
MERGE (f)-[:DERIVED_FROM]->(page)
RETURN f.id AS id
