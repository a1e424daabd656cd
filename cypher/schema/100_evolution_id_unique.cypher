CREATE CONSTRAINT evolution_id_unique IF NOT EXISTS
FOR (e:Evolution) REQUIRE e.id IS UNIQUE
