// The first statement of every evolution: takes the tenant's lock and returns the id of a note that
// already has this identity (a repeat add), if any.
@tenant_lock
OPTIONAL MATCH (n:Note {tenant: $tenant, source: $source, content_hash: $content_hash})
RETURN n.id AS existing_id
