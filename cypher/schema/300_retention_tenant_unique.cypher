// One retention policy per tenant (engine: maintenance/retention.py).
CREATE CONSTRAINT retention_tenant_unique IF NOT EXISTS FOR (r:Retention) REQUIRE r.tenant IS UNIQUE
