// Deletes one batch of a tenant's nodes with their relationships; callers repeat until it returns 0.
MATCH (n)
WHERE n.tenant = $tenant
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
