// The kept versions of each of these notes, oldest first (index note_version_note).
MATCH (v:NoteVersion {tenant: $tenant})
WHERE v.note_id IN $ids
RETURN v {.*, event_time: v.event_time.epochMillis, valid_from: v.valid_from.epochMillis,
          valid_to: v.valid_to.epochMillis} AS version
ORDER BY v.note_id, v.version
