// $dimension comes from the embedder; schema.py refuses a start with another dimension, and consolidation
// (create_schema) drops an index of another dimension first.
CREATE VECTOR INDEX note_embedding IF NOT EXISTS FOR (n:Note) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
