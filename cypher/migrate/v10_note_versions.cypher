// What folding reads of each note ($ids): its update time, when turns joined its neighbourhood, and its versions.
UNWIND $ids AS id
MATCH (n:Note {tenant: $tenant, id: id})
OPTIONAL MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
RETURN n.id AS id, n.updated_at.epochMillis AS updated_at,
       [bound IN coalesce(n.neighbourhood_after, []) | bound.epochMillis] AS neighbourhood_after,
       collect(v {.version, .reason, valid_from: v.valid_from.epochMillis, valid_to: v.valid_to.epochMillis}) AS versions
