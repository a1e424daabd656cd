SHOW VECTOR INDEXES YIELD name, state, options, properties
WHERE name = 'note_embedding'
RETURN state, options.indexConfig.`vector.dimensions` AS dimension,
       options.indexConfig.`vector.similarity_function` AS similarity, properties
