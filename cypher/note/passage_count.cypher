// How many passages the tenant holds, counted up to $most: none costs no k-NN, a few are scanned exactly
// (note/passage_search_exact), and past a few the exact number does not matter (a tenant may hold thousands).
MATCH (passage:Passage {tenant: $tenant})
WITH passage LIMIT $most
RETURN count(passage) AS held
