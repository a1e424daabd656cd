// One note per id, across tenants (ids are UUIDs unless the caller supplies them).
CREATE CONSTRAINT note_id_unique IF NOT EXISTS FOR (n:Note) REQUIRE n.id IS UNIQUE
