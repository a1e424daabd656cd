// A page of the tenant's pages by id with their text fields, for counting the tenant's statistics whole.
MATCH (p:Page {tenant: $tenant})
WHERE p.id > $after
RETURN p.id AS id, [field IN $fields | p[field]] AS texts
ORDER BY p.id
LIMIT $limit
