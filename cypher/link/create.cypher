// Links, created once and then updated; each row's type is checked against models.LINK_TYPES first. A link
// that was invalidated is valid again from now: a new period begins, the old ones stay.
UNWIND $rows AS row
MATCH (a:Note {id: row.source_id, tenant: $tenant})
MATCH (b:Note {id: row.target_id, tenant: $tenant})
MERGE (a)-[r:$(row.type)]->(b)
ON CREATE SET r.created_at = $now, r.periods = [$now]
SET r.periods = @link_periods + CASE WHEN r.invalid_at IS NULL THEN [] ELSE [$now] END
SET r.reason = row.reason, r.confidence = row.confidence, r.evolution_id = $evolution_id, r.invalid_at = null,
    r.invalid_reason = null, r.invalidated_by = null
RETURN startNode(r).id AS source_id, endNode(r).id AS target_id, type(r) AS type,
       r.reason AS reason, r.confidence AS confidence, r.created_at.epochMillis AS created_at,
       r.invalid_at.epochMillis AS invalid_at, [bound IN r.periods | bound.epochMillis] AS periods
