// Re-adding the same content from the same source in a tenant is idempotent; MERGE relies on this
// constraint for its lock, so concurrent adds cannot create twins. A note without a source has source ''.
CREATE CONSTRAINT note_identity_unique IF NOT EXISTS
FOR (n:Note) REQUIRE (n.tenant, n.source, n.content_hash) IS UNIQUE
