MATCH (:Note {id: $id, tenant: $tenant})-[s:SUPERSEDED_BY]->(newer:Note)
WITH newer, s ORDER BY s.at
RETURN newer.id AS id, s.reason AS reason, s.at.epochMillis AS at
