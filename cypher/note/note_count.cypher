// How many notes the tenant holds, counted up to $most: a tenant of no more than a few thousand is searched by
// an exact scan (note/vector_search_exact), whose answer no other tenant's vectors can change.
MATCH (node:Note {tenant: $tenant})
WHERE node.created_at IS NOT NULL  // every note has it: the (tenant, created_at) index, not a scan of all notes
WITH node LIMIT $most
RETURN count(node) AS held
