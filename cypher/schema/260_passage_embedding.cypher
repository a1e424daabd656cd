// A long note's passages (HAS_PASSAGE), each with a vector of its own: found by any part of the note.
// $dimension is the note index's; consolidation drops both indexes when the model's dimension changes.
CREATE VECTOR INDEX passage_embedding IF NOT EXISTS FOR (p:Passage) ON p.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine',
  `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction,
  `vector.quantization.enabled`: $quantized}}
