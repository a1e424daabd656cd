// A note goes with its links and its versions.
MATCH (n:Note {id: $id, tenant: $tenant})
OPTIONAL MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
WITH n, collect(v) AS versions
DETACH DELETE n
FOREACH (v IN versions | DETACH DELETE v)
RETURN count(*) AS deleted
