// How many passages the tenant holds: none costs no k-NN, a few are scanned exactly (note/passage_search_exact).
MATCH (passage:Passage {tenant: $tenant})
RETURN count(passage) AS held
