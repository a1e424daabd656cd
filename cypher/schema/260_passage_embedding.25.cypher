// Cypher 25 (Neo4j 2026.01+): as schema/050's note index, the passage index holds each passage's tenant, so
// that a k-NN query filters by tenant inside the index (note/passage_search.25).
CYPHER 25
CREATE VECTOR INDEX passage_embedding IF NOT EXISTS FOR (p:Passage) ON p.embedding WITH [p.tenant]
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
  `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction,
  `vector.quantization.enabled`: $quantized}}
