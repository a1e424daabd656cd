// The tenant's retention policy (no row: none set).
MATCH (r:Retention {tenant: $tenant})
RETURN r.max_notes AS max_notes, r.unused_days AS unused_days, r.min_heat AS min_heat
