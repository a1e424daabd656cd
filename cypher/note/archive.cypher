// Archive ($archive) or restore notes: only their state and its periods change; links, versions and passages
// stay. Returns the ids that changed (a note already in that state, or missing, is not one).
UNWIND $ids AS id
MATCH (n:Note {id: id, tenant: $tenant})
WHERE (n.archived_at IS NULL) = $archive
SET n.archived_periods = coalesce(n.archived_periods, []) + [$now],
    n.archived_at = CASE WHEN $archive THEN $now END
RETURN n.id AS id
