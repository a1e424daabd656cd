CREATE CONSTRAINT schema_marker_unique IF NOT EXISTS FOR (s:AmemSchema) REQUIRE s.name IS UNIQUE
