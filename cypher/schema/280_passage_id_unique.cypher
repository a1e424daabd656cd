// A passage's id is its note's and its start: consolidation writes new vectors by it.
CREATE CONSTRAINT passage_id_unique IF NOT EXISTS FOR (p:Passage) REQUIRE p.id IS UNIQUE
