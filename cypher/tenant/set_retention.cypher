// Set (or, with every rule null, clear) the tenant's retention policy.
MERGE (r:Retention {tenant: $tenant})
SET r.max_notes = $max_notes, r.unused_days = $unused_days, r.min_heat = $min_heat, r.set_at = $now
WITH r WHERE $max_notes IS NULL AND $unused_days IS NULL AND $min_heat IS NULL
DELETE r
