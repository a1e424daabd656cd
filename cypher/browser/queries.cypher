// Saved exploration queries for Neo4j Browser. Set the parameters first, e.g.
//   :param tenant => 'demo'
//   :param note_id => '<a note id from amem-graph list>'
//   :param entity => '<an entity key from amem-graph entity list --json, e.g. caroline>'
// then paste one query (each ends with a semicolon). Every query is scoped by $tenant and, as search is,
// leaves out notes a later note contradicted (invalid_at set), notes a retention policy archived (archived_at
// set) and invalidated links: drop those conditions to see them.

// name: A note's neighbourhood, with the reason of every link
MATCH (n:Note {tenant: $tenant, id: $note_id})-[r:RELATES_TO|ELABORATES|SUPPORTS|CONTRADICTS|FOLLOWS|SAME_ENTITY|NEXT]-(m:Note {tenant: $tenant})
WHERE r.invalid_at IS NULL AND m.invalid_at IS NULL AND m.archived_at IS NULL
RETURN n, r, m;

// name: A note's evolution history: its versions and the evolutions that made them
MATCH (n:Note {tenant: $tenant, id: $note_id})
OPTIONAL MATCH (n)-[h:HAS_VERSION]->(v:NoteVersion)
OPTIONAL MATCH (e:Evolution {tenant: $tenant})-[rv:REVISED]->(v)
OPTIONAL MATCH (t:Evolution {tenant: $tenant})-[tb:TRIGGERED_BY]->(n)
RETURN n, h, v, e, rv, t, tb;

// name: The hottest segments, with their pages (heat as amem-graph computes it, default weights)
MATCH (s:Segment {tenant: $tenant})
WHERE s.archived_at IS NULL
WITH s, s.visits + s.interaction_len
        + exp(-((datetime().epochMillis - s.last_access.epochMillis) / 1000.0) / 1e7) AS heat
ORDER BY heat DESC LIMIT 5
MATCH (s)-[h:HAS_PAGE]->(p:Page)
RETURN s, h, p, heat;

// name: The tenant's persona, with where each fact came from
MATCH (persona:Persona {tenant: $tenant})-[hf:HAS_FACT]->(f:Fact)
WHERE f.archived_at IS NULL AND f.invalid_at IS NULL
OPTIONAL MATCH (f)-[d:DERIVED_FROM]->(source)
RETURN persona, hf, f, d, source;

// name: The most linked notes
MATCH (n:Note {tenant: $tenant})-[r:RELATES_TO|ELABORATES|SUPPORTS|CONTRADICTS|FOLLOWS|SAME_ENTITY]-(m:Note)
WHERE r.invalid_at IS NULL AND n.invalid_at IS NULL AND m.invalid_at IS NULL
  AND n.archived_at IS NULL AND m.archived_at IS NULL
WITH n, count(r) AS links
ORDER BY links DESC LIMIT 10
RETURN n.id AS id, links, left(n.content, 80) AS content, n.keywords AS keywords;

// name: Everything about an entity: the notes that mention it or a name merged into it, in time order, and the session steps between them
MATCH (e:Entity {tenant: $tenant, key: $entity})<-[a:ALIAS_OF*0..1]-(alias:Entity)<-[m:MENTIONS]-(n:Note {tenant: $tenant})
WHERE n.invalid_at IS NULL AND n.archived_at IS NULL
OPTIONAL MATCH (n)-[x:NEXT]->(next:Note {tenant: $tenant})-[:MENTIONS]->(alias)
WHERE next.invalid_at IS NULL AND next.archived_at IS NULL
RETURN e, a, alias, m, n, x, next
ORDER BY coalesce(n.event_time, n.created_at);
