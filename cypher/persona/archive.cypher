// Facts the engine archived (past a kind's capacity): kept, out of use.
UNWIND $ids AS id
MATCH (f:Fact {tenant: $tenant, id: id})
SET f.archived_at = $now
