// The first statement of every evolution: analysed writes of one tenant take turns (TenantLock.tenant
// is unique, so MERGE locks one node until commit), so what is read after it stays true. Returns the
// id of a note that already has this identity (a repeat add), if any.
MERGE (l:TenantLock {tenant: $tenant})
SET l.writes = coalesce(l.writes, 0) + 1
WITH l
OPTIONAL MATCH (n:Note {tenant: $tenant, source: $source, content_hash: $content_hash})
RETURN n.id AS existing_id
