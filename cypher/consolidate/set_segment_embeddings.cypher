// New centroids for segments, written as the engine writes them.
UNWIND $rows AS row
MATCH (n:Segment {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(*) AS written
