// MemoryOS short-term memory: one page per dialogue turn.
CREATE CONSTRAINT page_id_unique IF NOT EXISTS FOR (p:Page) REQUIRE p.id IS UNIQUE
