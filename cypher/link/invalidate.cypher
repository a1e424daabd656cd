// Links are invalidated, never deleted: they keep their reason and say which evolution dropped them.
UNWIND $links AS l
MATCH (:Note {id: l.source_id, tenant: $tenant})-[r:$(l.type)]->(:Note {id: l.target_id, tenant: $tenant})
SET r.invalid_at = $now, r.invalid_reason = $reason, r.invalidated_by = $evolution_id
