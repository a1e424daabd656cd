// The first statement of every write transaction of a tenant that creates, changes or deletes notes.
@tenant_lock
RETURN lock.writes AS writes
