// The server's version and the Cypher versions it speaks ("5", and "25" from Neo4j 2025.06).
CALL dbms.components() YIELD name, versions
RETURN name, versions
