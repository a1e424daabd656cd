MATCH (:Note {id: $id, tenant: $tenant})-[s:SUPERSEDED_BY]->(newer:Note)
RETURN newer.id AS id, s.reason AS reason, s.at.epochMillis AS at
