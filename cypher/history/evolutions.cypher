// Evolutions a note triggered or that revised it, oldest first.
CALL () {
  MATCH (e:Evolution {tenant: $tenant, trigger_note_id: $id})
  RETURN e
  UNION
  MATCH (:Note {id: $id, tenant: $tenant})-[:HAS_VERSION]->(:NoteVersion)<-[:REVISED]-(e:Evolution)
  RETURN e
}
RETURN e {.*, at: e.at.epochMillis} AS evolution,
       [(e)-[:REVISED]->(v:NoteVersion) | [v.note_id, v.version]] AS revised
ORDER BY e.at, e.id
