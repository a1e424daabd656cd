// Links are invalidated, never deleted: they keep their reason and say which evolution dropped them, and their
// current period ends now. A link already invalid keeps the time and reason it was invalidated with.
UNWIND $links AS l
MATCH (:Note {id: l.source_id, tenant: $tenant})-[r:$(l.type)]->(:Note {id: l.target_id, tenant: $tenant})
WHERE r.invalid_at IS NULL
SET r.periods = @link_periods + [$now]
SET r.invalid_at = $now, r.invalid_reason = $reason, r.invalidated_by = $evolution_id
