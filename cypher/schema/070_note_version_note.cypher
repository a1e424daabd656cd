CREATE RANGE INDEX note_version_note IF NOT EXISTS FOR (v:NoteVersion) ON (v.tenant, v.note_id)
