SHOW VECTOR INDEXES YIELD name, state, options, properties
WHERE name = 'note_embedding'
RETURN state, options.indexConfig.`vector.dimensions` AS dimension,
       options.indexConfig.`vector.similarity_function` AS similarity, properties,
       options.indexConfig.`vector.hnsw.m` AS hnsw_m,
       options.indexConfig.`vector.hnsw.ef_construction` AS hnsw_ef_construction,
       options.indexConfig.`vector.quantization.enabled` AS quantized
