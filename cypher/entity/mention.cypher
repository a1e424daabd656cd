// Notes mention entities ($rows: note_id, key, name, kind, confidence, seen as epoch milliseconds). An entity
// is created on its first mention with that name and kind; `mentions` counts the notes that mention it, and
// every other name it is mentioned by joins its aliases (a bounded list); a `sure` mention sets its kind. The key was resolved by the
// caller (entities.keys); MERGE relies on the (tenant, key) constraint, under the tenant's lock. A mention keeps
// when it was recorded (`at`): a later analysis or a backfill mentions after its note was, and reads as of a
// moment count only the mentions recorded by then.
UNWIND $rows AS row
MATCH (n:Note {tenant: $tenant, id: row.note_id})
WITH n, row, datetime({epochMillis: row.seen}) AS seen
MERGE (e:Entity {tenant: $tenant, key: row.key})
ON CREATE SET e.name = row.name, e.kind = row.kind, e.aliases = [], e.mentions = 0, e.first_seen = seen,
  e.last_seen = seen
MERGE (n)-[m:MENTIONS]->(e)
ON CREATE SET m.confidence = row.confidence, m.at = $now, e.mentions = e.mentions + 1
ON MATCH SET m.confidence = CASE WHEN row.confidence > m.confidence THEN row.confidence ELSE m.confidence END
SET e.kind = CASE WHEN row.sure THEN row.kind ELSE e.kind END,
  e.aliases = CASE WHEN row.name = e.name OR row.name IN e.aliases OR size(e.aliases) >= $max_aliases
    THEN e.aliases ELSE e.aliases + row.name END,
  e.first_seen = CASE WHEN seen < e.first_seen THEN seen ELSE e.first_seen END,
  e.last_seen = CASE WHEN seen > e.last_seen THEN seen ELSE e.last_seen END
