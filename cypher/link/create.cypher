// $type is checked against models.LINK_TYPES before it gets here.
MATCH (a:Note {id: $source_id, tenant: $tenant})
MATCH (b:Note {id: $target_id, tenant: $tenant})
MERGE (a)-[r:$($type)]->(b)
ON CREATE SET r.created_at = $now
SET r.reason = $reason, r.confidence = $confidence
RETURN startNode(r).id AS source_id, endNode(r).id AS target_id, type(r) AS type,
       r.reason AS reason, r.confidence AS confidence, r.created_at.epochMillis AS created_at,
       r.invalid_at.epochMillis AS invalid_at
