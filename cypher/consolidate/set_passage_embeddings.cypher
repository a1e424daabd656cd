// New vectors for passages, written as the engine writes them.
UNWIND $rows AS row
MATCH (n:Passage {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(*) AS written
