// A page of the tenant's notes by id with their text fields, for counting the tenant's statistics whole.
MATCH (n:Note {tenant: $tenant})
WHERE n.created_at IS NOT NULL AND n.id > $after
RETURN n.id AS id, [field IN $fields | n[field]] AS texts
ORDER BY n.id
LIMIT $limit
