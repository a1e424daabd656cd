// Evolutions (analysed adds and reanalyses) and their LLM tokens, per analyser, as recorded on Evolution nodes (all processes, all time).
MATCH (e:Evolution)
WHERE $tenant IS NULL OR e.tenant = $tenant
RETURN e.analysis AS analysis, count(*) AS evolutions, sum(e.prompt_tokens) AS prompt_tokens,
       sum(e.completion_tokens) AS completion_tokens
ORDER BY analysis
