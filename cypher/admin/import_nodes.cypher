// `amem-graph import`: nodes with their labels (checked against the engine's labels before this runs) and
// properties; embeddings through setNodeVectorProperty, as the engine writes them. Returns the new element
// id of each exported key, for the relationships.
UNWIND $rows AS row
CREATE (n:$(row.labels))
SET n = row.props
WITH n, row
CALL (n, row) {
  WITH n, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
}
RETURN row.key AS key, elementId(n) AS id
