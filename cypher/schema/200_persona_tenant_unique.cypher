// One persona per tenant: MERGE on it is safe under concurrent promotions.
CREATE CONSTRAINT persona_tenant_unique IF NOT EXISTS FOR (p:Persona) REQUIRE p.tenant IS UNIQUE
