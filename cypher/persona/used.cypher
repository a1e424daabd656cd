// Facts a context used: one use each.
UNWIND $ids AS id
MATCH (f:Fact {tenant: $tenant, id: id})
SET f.uses = f.uses + 1, f.last_used = $now
