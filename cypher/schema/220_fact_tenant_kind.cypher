CREATE RANGE INDEX fact_tenant_kind IF NOT EXISTS FOR (f:Fact) ON (f.tenant, f.kind)
