// How many notes the tenant holds, counted up to $most: a tenant of no more than a few thousand is searched by
// an exact scan (note/vector_search_exact), whose answer no other tenant's vectors can change.
MATCH (node:Note {tenant: $tenant})
WITH node LIMIT $most
RETURN count(node) AS held
