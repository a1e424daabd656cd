// Notes by id with what was attached to them and by which adapter, in the order asked; ids of other
// tenants or without an attachment are left out.
UNWIND range(0, size($ids) - 1) AS i
MATCH (node:Note {tenant: $tenant, id: $ids[i]})
WHERE node.attached IS NOT NULL
RETURN @attached_map
ORDER BY i
SKIP $offset LIMIT $limit
