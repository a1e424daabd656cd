// New persona facts, from a segment and a page. A fact that updates an older one (same subject, new
// value) invalidates it and points back at it: the old fact is kept as history, never deleted.
MERGE (persona:Persona {tenant: $tenant})
ON CREATE SET persona.created_at = $now
WITH persona
UNWIND $rows AS row
MATCH (s:Segment {tenant: $tenant, id: $segment_id})
MATCH (page:Page {tenant: $tenant, id: row.page_id})
CREATE (f:Fact {id: row.id, tenant: $tenant, kind: row.kind, text: row.text, confidence: row.confidence,
                mentions: 1, uses: 0, assistant: row.assistant, analysis: row.analysis, model: row.model,
                created_at: $now, updated_at: $now})
CREATE (persona)-[:HAS_FACT]->(f)
CREATE (f)-[:DERIVED_FROM]->(s)
CREATE (f)-[:DERIVED_FROM]->(page)
WITH f, row
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
WITH f, row
CALL (f, row) {
  WITH f, row WHERE row.supersedes IS NOT NULL
  MATCH (old:Fact {tenant: $tenant, id: row.supersedes})
  SET old.invalid_at = $now
  CREATE (old)-[:SUPERSEDED_BY {reason: row.reason, at: $now}]->(f)
}
RETURN f.id AS id
