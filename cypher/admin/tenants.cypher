MATCH (n:Note)
RETURN n.tenant AS tenant, count(*) AS notes
ORDER BY tenant
