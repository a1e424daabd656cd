MATCH (n)
WHERE $tenant IS NULL OR n.tenant = $tenant
UNWIND labels(n) AS label
RETURN label, count(*) AS count
ORDER BY label
