// Speaker filters and the speakers a question may name.
CREATE RANGE INDEX note_tenant_speaker IF NOT EXISTS FOR (n:Note) ON (n.tenant, n.speaker)
