OPTIONAL MATCH (s:AmemSchema {name: 'amem-graph'})
RETURN s.version AS version, s.embedding_model AS embedding_model, s.embedding_dimension AS embedding_dimension,
       s.consolidating AS consolidating
