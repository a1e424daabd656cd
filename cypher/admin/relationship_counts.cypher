MATCH (a)-[r]->()
WHERE $tenant IS NULL OR a.tenant = $tenant
RETURN type(r) AS type, count(*) AS count
ORDER BY type
