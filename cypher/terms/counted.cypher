// Whether the tenant's statistics of an index were counted (the schema 9 upgrade counts each tenant once).
OPTIONAL MATCH (c:Corpus {tenant: $tenant, index: $index})
RETURN c IS NOT NULL AS counted
