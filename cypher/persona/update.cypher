// Properties of facts as the engine decided them (archiving past a kind's capacity: kept, out of use).
UNWIND $rows AS row
MATCH (f:Fact {tenant: $tenant, id: row.id})
SET f += row.values
