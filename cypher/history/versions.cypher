MATCH (:Note {id: $id, tenant: $tenant})-[:HAS_VERSION]->(v:NoteVersion)
RETURN v {.*, event_time: v.event_time.epochMillis, valid_from: v.valid_from.epochMillis,
          valid_to: v.valid_to.epochMillis} AS version
ORDER BY v.version
