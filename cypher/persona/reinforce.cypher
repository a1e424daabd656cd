// A fact derived again: one more mention, the higher confidence, and the new page and segment as sources
// (only while it is in use: a fact replaced or archived meanwhile is left as it is).
UNWIND $rows AS row
MATCH (f:Fact {tenant: $tenant, id: row.existing_id})
WHERE f.invalid_at IS NULL AND f.archived_at IS NULL
MATCH (s:Segment {tenant: $tenant, id: $segment_id})
MATCH (page:Page {tenant: $tenant, id: row.page_id})
SET f.mentions = f.mentions + 1, f.confidence = CASE WHEN row.confidence > f.confidence THEN row.confidence
                                                   ELSE f.confidence END, f.updated_at = $now
MERGE (f)-[:DERIVED_FROM]->(s)
MERGE (f)-[:DERIVED_FROM]->(page)
RETURN f.id AS id
