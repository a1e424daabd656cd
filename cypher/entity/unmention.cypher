// Notes ($ids) lose their mentions before they are found again: each entity counts one note fewer, and one that no
// note mentions any more goes, unless it takes part in a merge (ALIAS_OF, or one undone: WAS_ALIAS_OF), which
// outlives a re-extraction.
UNWIND $ids AS id
MATCH (:Note {tenant: $tenant, id: id})-[m:MENTIONS]->(e:Entity)
DELETE m
WITH e, count(*) AS lost
SET e.mentions = e.mentions - lost
WITH e
WHERE e.mentions <= 0 AND NOT (e)-[:ALIAS_OF|WAS_ALIAS_OF]-()
DETACH DELETE e
