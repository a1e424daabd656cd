// A segment's vector is the mean of its pages' (as when pages join it): recomputed from their new vectors.
MATCH (s:Segment)-[:HAS_PAGE]->(p:Page)
WHERE p.embedding IS NOT NULL
WITH s, collect(p.embedding) AS vectors
WITH s, [i IN range(0, size(vectors[0]) - 1) | reduce(total = 0.0, v IN vectors | total + v[i]) / size(vectors)] AS centroid
CALL db.create.setNodeVectorProperty(s, 'embedding', centroid)
RETURN count(*) AS segments
