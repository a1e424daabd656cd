// A session's pages in order: the STM (the last pages), its overflow, and the last page a new turn follows.
CREATE RANGE INDEX page_tenant_session IF NOT EXISTS FOR (p:Page) ON (p.tenant, p.session_id, p.seq)
