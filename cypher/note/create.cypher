// Bulk add. MERGE on the identity constraint makes re-adding idempotent; only new notes get a vector, and
// a long note's passages theirs.
// It runs after the tenant lock (cypher/tenant/lock.cypher), so a bulk import never slips a note in while an
// evolution of the tenant runs.
// A note with a session takes the next seq and is chained after the session's last note; each row's
// subquery sees the rows before it, so one batch may hold many turns of a session.
UNWIND $rows AS row
MERGE (n:Note {tenant: $tenant, source: row.source, content_hash: row.content_hash})
ON CREATE SET
  n.id = row.id, n.content = row.content, n.keywords = row.keywords, n.tags = row.tags,
  n.context = row.context, n.category = row.category, n.importance = row.importance,
  n.retrieval_count = 0, n.event_time = row.event_time, n.created_at = $now, n.updated_at = $now,
  n.version = 1, n.valid_from = coalesce(row.event_time, $now), n.analysis = row.analysis, n.model = row.model,
  n.speaker = row.speaker, n.neighbourhood = row.neighbourhood, n.addressee = row.addressee, n.called = row.called,
  n.extracted = row.extracted, n.given = row.given
WITH n, row, n.id = row.id AS created
CALL (n, row, created) {
  WITH n, row WHERE created
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
}
CALL (n, row, created) {
  WITH n, row WHERE created
  UNWIND row.passages AS part
  CREATE (n)-[:HAS_PASSAGE]->(passage:Passage {id: part.id, tenant: $tenant, start: part.start, end: part.end})
  WITH passage, part
  CALL db.create.setNodeVectorProperty(passage, 'embedding', part.embedding)
}
CALL (n, row, created) {
  WITH n, row WHERE created AND row.session IS NOT NULL
  OPTIONAL MATCH (last:Note {tenant: $tenant, session: row.session})
  WHERE last.seq IS NOT NULL
  WITH n, row, last ORDER BY last.seq DESC LIMIT 1
  SET n.session = row.session, n.seq = coalesce(last.seq, 0) + 1
  WITH n, last WHERE last IS NOT NULL
  CREATE (last)-[:NEXT]->(n)
}
RETURN row.id AS requested_id, n.id AS id, created
