#!/usr/bin/env bash
# The main job: set up; the sample conversation on the embedded store (nothing to start); then, where
# Java and Maven are, the project's own local Neo4j: create the schema, add a few linked notes, search
# them, and a dialogue through the MemoryOS tiers.
# Leaves the server running so you can explore it in Neo4j Browser; `amem-graph neo4j stop` stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --demo   # the package and one Neo4j release: nothing the demo does not use
amem=.venv/bin/amem-graph
echo "== On the embedded store (no server; NEO4J_URI unset)"
NEO4J_URI='' AMEM_STORE=embedded $amem demo -t demo
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo; echo "No Java 17 / Maven here: the local Neo4j part is skipped (the embedded store above needs neither)."
  exit 0
fi
echo; echo "== On the project's own local Neo4j"
# A handful of calls: they do not wait for the warm-up a long-running service would (`--warm-up`, docs/python.md).
$amem neo4j start --warm-up 0
eval "$($amem neo4j env)"
$amem init --warm-up 0
tenant=demo
first=$($amem add "Caroline went to an LGBTQ support group on 7 May 2023 and found it inspiring." \
  -t $tenant --source demo:1 --tag identity --event-time 2023-05-07T18:00:00+00:00 --json | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["id"])')
$amem add "Melanie painted a sunrise over the lake last year." -t $tenant --source demo:2 --tag art >/dev/null
$amem add "Caroline is researching adoption agencies; she wants to give a child a loving home." \
  -t $tenant --source demo:3 --tag family >/dev/null
$amem add "Melanie ran a charity race for mental health on Saturday." -t $tenant --source demo:4 --tag health >/dev/null
echo; echo "Note $first, its links (with the evidence) and versions:"; $amem show "$first" -t $tenant
echo; echo 'Search: "What is Caroline planning for her family?"'
$amem search "What is Caroline planning for her family?" -t $tenant -k 3
for turn in "Caroline: I finally went to the pottery class you told me about." \
            "Melanie: Oh nice! Did you make anything?" \
            "Caroline: A little blue bowl. My hands were covered in clay."; do
  $amem add "$turn" -t $tenant --session chat-1 --event-time 2023-07-03T13:36:00+00:00 >/dev/null
done
echo; echo 'Search with provenance (a turn found through its session neighbours): "What did Caroline make?"'
$amem search "What did Caroline make?" -t $tenant -k 3 --context
# Dialogue through the MemoryOS tiers. A short STM and a low promotion heat, so that five turns are
# enough to see pages move into segments and a hot segment become notes and persona facts.
# Turns are not idempotent (two identical turns are two turns), so a second run of the demo adds none.
export AMEM_STM_CAPACITY=2 AMEM_PROMOTE_HEAT=2.5
held=$($amem tiers show -t $tenant --json | .venv/bin/python -c 'import json,sys; d=json.load(sys.stdin); print(len(d["stm"]) + len(d["segments"]))')
[ "$held" = 0 ] && for turn in "I adopted a beagle named Max last week.|Congratulations! Beagles are lovely dogs." \
            "My beagle Max loves chasing squirrels in the park.|That sounds like a happy dog." \
            "I work as a nurse at the city hospital.|That must keep you busy." \
            "Max needs a dog sitter while I travel to Japan.|I will remember that Max needs a sitter." \
            "I live in Boston.|Boston is a lovely city."; do
  $amem turn add "${turn%%|*}" "${turn#*|}" -t $tenant --session chat-2 >/dev/null
done
echo; echo "The tiers: short-term pages, segments with heat, persona:"; $amem tiers show -t $tenant --session chat-2
echo; echo 'Context across the tiers: "What is my dog called?"'
$amem tiers context "What is my dog called?" -t $tenant --session chat-2
unset AMEM_STM_CAPACITY AMEM_PROMOTE_HEAT
echo
$amem neo4j status
echo
echo "Explore the graph in Neo4j Browser (user neo4j, password from \`amem-graph neo4j env\`):"
echo "  MATCH (n:Note {tenant: 'demo'})-[r]-(m) RETURN n, r, m"
echo "  MATCH (s:Segment {tenant: 'demo'})-[h:HAS_PAGE]->(p:Page) RETURN s, h, p"
echo "Stop the server with: .venv/bin/amem-graph neo4j stop"
