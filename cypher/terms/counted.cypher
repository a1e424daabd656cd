// Whether the tenant's BM25 statistics are kept already (the schema 9 upgrade counts each tenant once).
MATCH (c:Corpus {tenant: $tenant})
WHERE c.index IS NOT NULL
RETURN count(c) > 0 AS counted
