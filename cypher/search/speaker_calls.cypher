// The names the tenant's notes call their speakers by ("Thanks, Kate!" answering Emi): how a question may
// name a speaker who speaks under another name.
MATCH (node:Note {tenant: $tenant})
WHERE node.called IS NOT NULL
RETURN node.addressee AS speaker, node.called AS name, count(*) AS times
