// Properties of segments as the engine decided them (a claim for promotion, archiving).
UNWIND $rows AS row
MATCH (s:Segment {tenant: $tenant, id: row.id})
SET s += row.values
