// A note goes with its links, its passages, its versions, and the evolutions it triggered that revised no other
// note (those that did stay: they explain the other notes' versions). A fact it alone superseded is
// valid again: what invalidated it is gone. Its session's chain closes over the gap. The entities it
// mentions count one note less; one that only it mentioned goes too.
MATCH (n:Note {id: $id, tenant: $tenant})
OPTIONAL MATCH (n)-[:HAS_PASSAGE]->(passage:Passage)
WITH n, collect(passage) AS passages
OPTIONAL MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
WITH n, passages, collect(v) AS versions
OPTIONAL MATCH (n)<-[:TRIGGERED_BY]-(e:Evolution)
WHERE all(x IN [(e)-[:REVISED]->(r:NoteVersion) | r] WHERE x.note_id = n.id)
WITH n, passages, versions, collect(e) AS evolutions
OPTIONAL MATCH (older:Note)-[:SUPERSEDED_BY]->(n)
WHERE NOT EXISTS { (older)-[:SUPERSEDED_BY]->(other:Note) WHERE other <> n }
WITH n, passages, versions, evolutions, collect(older) AS restored
OPTIONAL MATCH (n)-[:MENTIONS]->(entity:Entity)
WITH n, passages, versions, evolutions, restored, [e IN collect(entity) WHERE e.mentions > 1] AS shared,
     [e IN collect(entity) WHERE e.mentions <= 1] AS orphaned
OPTIONAL MATCH (before:Note)-[:NEXT]->(n)-[:NEXT]->(after:Note)
FOREACH (_ IN CASE WHEN after IS NULL THEN [] ELSE [1] END | CREATE (before)-[:NEXT]->(after))
DETACH DELETE n
FOREACH (p IN passages | DETACH DELETE p)
FOREACH (v IN versions | DETACH DELETE v)
FOREACH (e IN evolutions | DETACH DELETE e)
FOREACH (o IN restored | SET o.invalid_at = null, o.valid_to = null)
FOREACH (e IN shared | SET e.mentions = e.mentions - 1)
FOREACH (e IN orphaned | DETACH DELETE e)
RETURN [o IN restored | o.id] AS restored
