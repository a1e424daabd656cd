// A session's chain: the last note of a session (highest seq) is found by this index on every add.
CREATE RANGE INDEX note_tenant_session IF NOT EXISTS FOR (n:Note) ON (n.tenant, n.session, n.seq)
