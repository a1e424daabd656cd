// How far a consolidation got (written with each batch of vectors, in its transaction); null when it is over.
// Every tenant's lock too: writers in flight, which read the marker before this, commit first (a batch read
// after sees what they wrote); writers after read this marker (cypher/tenant/lock.cypher).
MATCH (s:AmemSchema {name: 'amem-graph'})
SET s.consolidating = $reached
WITH s
OPTIONAL MATCH (lock:TenantLock)
SET lock.writes = coalesce(lock.writes, 0) + 1
RETURN count(lock) AS tenants
