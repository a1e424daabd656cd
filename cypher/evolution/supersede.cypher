// A contradicted fact is invalidated, never deleted, and points at the note that replaced it.
UNWIND $contradictions AS c
MATCH (old:Note {id: c.old_id, tenant: $tenant})
MATCH (new:Note {id: c.new_id, tenant: $tenant})
// Its valid time ends where the newer note's begins (never before its own began); recorded: from now.
SET old.valid_to = CASE WHEN old.invalid_at IS NOT NULL THEN old.valid_to
                        WHEN new.valid_from < old.valid_from THEN old.valid_from ELSE new.valid_from END
SET old.invalid_at = coalesce(old.invalid_at, $now)
MERGE (old)-[s:SUPERSEDED_BY]->(new)
ON CREATE SET s.reason = c.reason, s.at = $now, s.evolution_id = $evolution_id
RETURN old.id AS id
