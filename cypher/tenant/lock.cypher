// The first statement of every write transaction of a tenant that creates, changes or deletes notes. It reads the
// schema marker under the lock: a consolidation (cypher/admin/consolidation_reached.cypher) takes every tenant's
// lock, so a writer that read the marker before it began commits before it does. A tenant's first write has no
// lock yet for the consolidation to take: it takes the marker's instead.
@tenant_lock
OPTIONAL MATCH (s:AmemSchema {name: 'amem-graph'})
FOREACH (_ IN CASE WHEN lock.writes = 1 AND s IS NOT NULL THEN [1] ELSE [] END |
  SET s.tenant_locks = coalesce(s.tenant_locks, 0) + 1)
RETURN lock.writes AS writes, s.embedding_model AS embedding_model, s.consolidating AS consolidating
