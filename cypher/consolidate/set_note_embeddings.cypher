// New vectors for notes, written as the engine writes them.
UNWIND $rows AS row
MATCH (n:Note {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(*) AS written
