MERGE (s:AmemSchema {name: 'amem-graph'})
ON CREATE SET s.created_at = $now
SET s.version = $version, s.embedding_model = $model, s.embedding_dimension = $dimension, s.updated_at = $now
