// `amem-graph import`: relationships between nodes this import created (by element id), with their types
// (checked against the engine's relationship types before this runs) and properties.
UNWIND $rows AS row
MATCH (a) WHERE elementId(a) = row.start AND a.tenant = $tenant
MATCH (b) WHERE elementId(b) = row.end AND b.tenant = $tenant
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.props
RETURN count(r) AS created
