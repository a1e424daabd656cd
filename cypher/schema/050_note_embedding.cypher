// $dimension comes from the embedder; maintenance/schema.py refuses a start with another dimension, and consolidation
// (create_schema) drops an index of another dimension first. The HNSW settings ($hnsw_*, $quantized) are the
// store's VECTOR_INDEX: an index built with others is dropped and built again by create_schema.
CREATE VECTOR INDEX note_embedding IF NOT EXISTS FOR (n:Note) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
  `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction,
  `vector.quantization.enabled`: $quantized}}
