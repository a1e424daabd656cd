// The text fields of pages by id, as the page_text index reads them ($fields: PAGE_FIELDS).
UNWIND $ids AS id
MATCH (p:Page {id: id, tenant: $tenant})
RETURN p.id AS id, [field IN $fields | p[field]] AS texts
