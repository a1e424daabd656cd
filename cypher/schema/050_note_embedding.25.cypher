// Cypher 25 (Neo4j 2026.01+): the index also holds each note's tenant, so that a k-NN query filters by tenant
// inside the index (note/vector_search.25) instead of over-fetching from every tenant's notes.
// $dimension comes from the embedder; maintenance/schema.py refuses a start with another dimension, and consolidation
// (create_schema) drops an index of another dimension first.
CYPHER 25
CREATE VECTOR INDEX note_embedding IF NOT EXISTS FOR (n:Note) ON n.embedding WITH [n.tenant]
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
  `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction,
  `vector.quantization.enabled`: $quantized}}
