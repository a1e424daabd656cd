// One entity per thing per tenant: MERGE on the key relies on this constraint for its lock.
CREATE CONSTRAINT entity_key_unique IF NOT EXISTS FOR (e:Entity) REQUIRE (e.tenant, e.key) IS UNIQUE
