"""The viewer's server over real HTTP on both stores: what each view says of a tenant (the network, a note's
versions and links, a search's explanation, the memory as of a moment and what changed since), and its guards
(token, Host, read-only, one tenant, a strict content security policy)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from amem_graph import AgenticMemory, Link, NoteInput, Settings
from amem_graph.viewer import VENDORED, Viewer
from amem_graph.viewer.server import STATIC
from amem_graph.viewer.views import words_diff

from .viewer_sample import HOSTILE, Sample, sample

STORES = ("neo4j", "embedded")


@pytest.fixture
def data(memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory]) -> Iterator[Sample]:
    made = sample(memory, open_memory)
    yield made
    memory.admin.delete_tenant(made.other_tenant)


@pytest.fixture
def viewer(memory: AgenticMemory, data: Sample) -> Iterator[Viewer]:
    with Viewer(memory) as served:
        yield served


def request(viewer: Viewer, path: str, *, token: str | None = "cookie", method: str = "GET",
            host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Host": host} if host else {}
    if token == "cookie":
        headers["Cookie"] = f"{viewer.cookie}={viewer.token}"
    elif token is not None:
        path += ("&" if "?" in path else "?") + urlencode({"token": token})
    call = urllib.request.Request(f"http://127.0.0.1:{viewer.port}{path}", method=method, headers=headers)
    try:
        with urllib.request.urlopen(call, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def api(viewer: Viewer, path: str, **params: Any) -> Any:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    status, _, body = request(viewer, f"/api/{path}" + (f"?{query}" if query else ""))
    assert status == 200, body
    return json.loads(body)


def test_the_network_is_the_tenants_notes_links_sessions_and_entities(viewer: Viewer, data: Sample) -> None:
    summary = api(viewer, "summary")
    assert summary["tenant"] == viewer._views.memory.tenant
    assert summary["counts"]["Note"] == 7 and summary["first"] < summary["now"]
    assert summary["queue"] == {"pending": 0, "lag_s": 0.0}  # no model: nothing waits for one
    suggested = api(viewer, "suggest")
    assert "s1" in suggested["sessions"] and "Denver" in suggested["entities"]

    net = api(viewer, "network")
    ids = {n["note"]["id"] for n in net["notes"]}
    assert ids == {data.dog, data.shoes, data.vet, data.hostile, data.new_home}  # current notes only, by default
    assert any(link["source_id"] == data.shoes and link["target_id"] == data.dog and link["type"] == "ELABORATES"
               and link["reason"] == "the dog that chewed them" for link in net["links"])
    assert [data.dog, data.shoes] in net["session_steps"] and [data.shoes, data.hostile] in net["session_steps"]
    denver = next(key for key, entity in net["entities"].items() if entity["name"] == "Denver")
    assert [data.new_home, denver] in net["mentions"]
    assert all("embedding" not in n["note"] or n["note"]["embedding"] is None for n in net["notes"])

    everything = api(viewer, "network", all=1)
    states = {n["note"]["id"]: n["state"] for n in everything["notes"]}
    assert states[data.old_home] == "superseded" and states[data.new_home] == "current"
    assert states[data.archived] == "archived"

    assert {n["note"]["id"] for n in api(viewer, "network", session="s1")["notes"]} == {data.dog, data.shoes, data.hostile}
    assert {n["note"]["id"] for n in api(viewer, "network", entity="Denver")["notes"]} == {data.new_home}
    limited = api(viewer, "network", limit=2)
    assert len(limited["notes"]) == 2 and limited["more"] is True


def test_an_empty_tenant_shows_an_empty_memory(
    open_memory: Callable[[str], AgenticMemory], tenant: str, data: Sample,
) -> None:
    with open_memory(tenant + "-empty") as empty, Viewer(empty) as served:
        summary = api(served, "summary")
        assert summary["first"] is None and summary["counts"].get("Note", 0) == 0
        # It says so, and names the tenants that hold something (the sample's among them): a typo shows at once.
        assert summary["empty"] is True and tenant in summary["tenants"]
        net = api(served, "network")
        assert net["notes"] == [] and net["links"] == [] and net["more"] is False
        assert api(served, "search", q="anything at all")["hits"] == []
        assert api(served, "tiers")["segments"] == [] and api(served, "entities")["entities"] == []


def test_said_time_steps_through_sessions_and_days_and_the_network_follows(
    open_memory: Callable[[str], AgenticMemory], tenant: str,
) -> None:
    with open_memory(tenant + "-said") as memory, Viewer(memory) as served:
        for text, session, day in (("Gina: I am off to Rome.", "s1", "01"), ("Jon: Enjoy it!", "s1", "01"),
                                   ("Gina: Rome was sunny.", None, "03"), ("Jon: I opened my studio.", "s2", "08"),
                                   ("Gina: Congratulations!", "s2", "08")):
            memory.add(text, session=session, event_time=f"2023-05-{day}T10:00:00+00:00")
        memory.add("A note that says no date.")
        timeline = api(served, "timeline")
        assert [(s["label"], s["notes"]) for s in timeline["steps"]] == [
            ("session s1", 2), ("2023-05-03", 3), ("session s2", 5)]
        assert timeline["notes"] == 6 and timeline["undated"] == 1  # "of 6 notes": the page counts them all
        # At the slider's start, the first session alone: the network read before the next step's first moment.
        first = api(served, "network", before=timeline["steps"][1]["at"])
        assert sorted(n["note"]["content"] for n in first["notes"]) == ["Gina: I am off to Rome.", "Jon: Enjoy it!"]
        memory.admin.delete_tenant()


def test_the_overview_is_the_memory_along_its_time(open_memory: Callable[[str], AgenticMemory], tenant: str) -> None:
    """Past what a page draws note by note, the overview is a map: the sessions in the order they were said (a day
    for notes in none), the entities they share as hubs, one said throughout named instead; beyond the steps a map
    draws, consecutive ones grouped, a group opening to its steps and a step to its notes in order."""
    with open_memory(tenant + "-map") as memory, Viewer(memory) as served:
        rows = []
        for day in range(1, 36):  # 35 days, each a session of two turns, said in an order they were not recorded in
            said = f"2023-{1 + (day * 7) % 12:02d}-{1 + day % 27:02d}T10:00:00+00:00"
            topic = "Rome" if day % 3 == 0 else "Denver"
            rows += [NoteInput(f"Gina: Day {day} in {topic} with Jon.", session=f"day-{day}", event_time=said),
                     NoteInput(f"Jon: Tell me more about {topic} on day {day}, Gina.", session=f"day-{day}", event_time=said)]
        rows.append(NoteInput("Gina: Rome again, between sessions.", event_time="2023-06-15T09:00:00+00:00"))
        memory.add_many(rows)
        drawn = api(served, "network")
        assert drawn["kind"] == "map" and drawn["notes"] == 71
        steps = drawn["steps"]
        assert [s["first"] for s in steps] == sorted(s["first"] for s in steps)
        groups = [s for s in steps if s["kind"] == "group"]
        assert len(steps) <= 30 and groups and sum(s["steps"] for s in steps) == 36
        assert {e["name"] for e in drawn["throughout"]} >= {"Gina", "Jon"}  # in every step: named, not drawn
        assert {h["entity"]["name"] for h in drawn["hubs"]} >= {"Rome", "Denver"}
        # A group opens to its steps; a step to its notes, as said; an unknown step is refused.
        group = groups[0]
        inside = api(served, "network", first=group["span"][0], last=group["span"][1])
        assert inside["kind"] == "map" and len(inside["steps"]) == group["steps"]
        session = next(s for s in inside["steps"] if s["kind"] == "session")
        notes = api(served, "network", step=session["key"])
        assert notes["kind"] == "notes" and [n["note"]["content"][:4] for n in notes["notes"]] == ["Gina", "Jon:"]
        day = next(s for s in steps if s["kind"] == "day") if any(s["kind"] == "day" for s in steps) else next(
            s for g in groups for s in api(served, "network", first=g["span"][0], last=g["span"][1])["steps"]
            if s["kind"] == "day")
        assert [n["note"]["content"] for n in api(served, "network", step=day["key"])["notes"]] == [
            "Gina: Rome again, between sessions."]
        assert request(served, "/api/network?step=nonsense")[0] == 400
        assert request(served, "/api/network?first=" + quote(session["key"]))[0] == 400
        assert request(served, "/api/network?first=session:nope&last=session:nope")[0] == 400
        # Said before a moment: the map holds what had been said by then.
        early = api(served, "network", before="2023-03-01T00:00:00+00:00")
        said = [r for r in rows if str(r.event_time) < "2023-03-01"]
        assert 0 < len(said) < len(rows)
        assert (early["notes"] if early["kind"] == "map" else len(early["notes"])) == len(said)
        # The recorded-time slider: the moments the memory changed, not milliseconds; its last step holds them all.
        recorded = api(served, "timeline", axis="recorded")
        assert 1 <= len(recorded["steps"]) <= 200 and recorded["steps"][-1]["notes"] == 71
        assert request(served, "/api/timeline?axis=sideways")[0] == 400
        memory.admin.delete_tenant()


def test_a_notes_neighbourhood_walks_links_and_session_order(viewer: Viewer, data: Sample) -> None:
    around = api(viewer, "network", around=data.dog, hops=1)
    hops = {n["note"]["id"]: n["hops"] for n in around["notes"]}
    assert hops[data.dog] == 0 and hops[data.shoes] == 1
    joined = {l["source_id"] for l in around["links"] if l["target_id"] == data.dog} | {
        l["target_id"] for l in around["links"] if l["source_id"] == data.dog} | {
        b for a, b in around["session_steps"] if a == data.dog} | {a for a, b in around["session_steps"] if b == data.dog}
    assert {note_id for note_id, steps in hops.items() if steps == 1} <= joined  # one link or session step away
    farther = {n["note"]["id"]: n["hops"] for n in api(viewer, "network", around=data.dog, hops=2)["notes"]}
    assert farther.get(data.hostile) in (1, 2)  # the session's third turn: at most two steps on
    assert request(viewer, "/api/network?around=no-such-note")[0] == 404


def test_a_note_shows_its_versions_as_a_diff_its_links_and_entities(viewer: Viewer, data: Sample) -> None:
    note = api(viewer, f"note/{data.dog}")
    assert note["state"] == "current" and note["note"]["content"].endswith("Maximus in May 2023.")
    change = next(c for c in note["changes"] if c["reason"] == "the dog's full name")
    assert ["-", "Max"] in change["content"] and ["+", "Maximus"] in change["content"]
    assert change["before"]["content"] == "Alice adopted a beagle named Max in May 2023."
    link = next(link for link in note["links"] if link["other_id"] == data.shoes and link["type"] == "ELABORATES")
    assert not link["outgoing"] and link["reason"] == "the dog that chewed them" and link["other"]["content"].startswith("Max chewed")
    assert any(e["name"] == "Alice" for e in note["entities"])
    assert note["evolutions"], "the note's own analysis is an evolution"

    old = api(viewer, f"note/{data.old_home}")
    assert old["state"] == "superseded"
    assert old["superseded_by"][0]["newer_id"] == data.new_home and old["superseded_by"][0]["reason"] == "she moved to Denver"


def test_as_of_a_moment_the_memory_is_as_it_stood_and_changes_since_are_marked(viewer: Viewer, data: Sample) -> None:
    then = data.before.isoformat()
    note = api(viewer, f"note/{data.dog}", as_of=then)
    assert note["note"]["content"] == "Alice adopted a beagle named Max in May 2023."
    assert not any(c["reason"] == "the dog's full name" for c in note["changes"])

    net = api(viewer, "network", as_of=then)
    by_id = {n["note"]["id"]: n for n in net["notes"]}
    assert data.new_home not in by_id and by_id[data.old_home]["state"] == "current"  # not superseded yet
    assert by_id[data.dog]["note"]["content"].endswith("Max in May 2023.")
    assert request(viewer, f"/api/note/{data.new_home}?as_of={quote(then)}")[0] == 404

    marked = {n["note"]["id"]: n["change"] for n in api(viewer, "network", since=then, all=1)["notes"]}
    assert marked[data.dog] == "changed" and marked[data.new_home] == "added"
    assert marked[data.old_home] == "superseded" and marked[data.shoes] is None


def test_a_link_that_ended_since_a_moment_is_shown_ended(viewer: Viewer, data: Sample, memory: AgenticMemory) -> None:
    link = Link(data.vet, data.shoes, "SUPPORTS")
    # What an analyser's decision does when a later note contradicts a link (no public call ends a link by hand).
    memory._store.write(memory.tenant, lambda tx: tx.link([link], "evolution-test", invalidate="no longer holds"))
    now = {(l["source_id"], l["target_id"], l["type"]) for l in api(viewer, "network")["links"]}
    assert (data.vet, data.shoes, "SUPPORTS") not in now  # current links only
    since = api(viewer, "network", since=data.before.isoformat())["links"]
    ended = next(l for l in since if (l["source_id"], l["target_id"], l["type"]) == (data.vet, data.shoes, "SUPPORTS"))
    assert ended["change"] == "ended"
    made = next(l for l in since if l["type"] == "ELABORATES")
    assert made["change"] is None  # made before that moment, valid since


def test_a_neighbourhood_says_when_more_notes_lie_beyond(viewer: Viewer, data: Sample) -> None:
    whole = api(viewer, "network", around=data.shoes, hops=2)
    assert whole["more"] is False and len(whole["notes"]) >= 4
    cut = api(viewer, "network", around=data.shoes, hops=2, limit=2)
    assert cut["more"] is True and len(cut["notes"]) == 3  # the centre and the two nearest
    assert cut["notes"][0]["note"]["id"] == data.shoes


def test_a_search_explains_each_hit_and_counts_no_use(
    viewer: Viewer, data: Sample, memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory],
) -> None:
    found = api(viewer, "search", q="chewed running shoes", mode="fulltext", hops=2)
    hits = {h["note"]["id"]: h for h in found["hits"]}
    assert hits[data.shoes]["hops"] == 0 and hits[data.shoes]["fulltext_score"] > 0
    reached = hits[data.vet]  # no word of the query: found through its link
    assert reached["hops"] == 1 and reached["seed"] == data.shoes and reached["fulltext_score"] is None
    assert reached["path"] == [{"from_id": data.shoes, "type": "SUPPORTS", "reason": "why it chews things",
                                "confidence": 0.9}]
    # Which words matched, where: the hit's text marks them; the CLI's label says the same.
    shoes = hits[data.shoes]
    assert shoes["match"]["words"] == ["chewed", "running", "shoes"] and shoes["found"].startswith("words: chewed")
    content = shoes["note"]["content"]
    assert [content[a:b] for a, b in shoes["match"]["spans"]] == ["chewed", "running", "shoes"]
    assert reached["found"].startswith("SUPPORTS from ")
    # The links between the hits are drawn, not only the paths: the graph is not a grid of dots.
    assert any({link["source"], link["target"]} == {data.shoes, data.vet} for link in found["links"])
    # A look is not a recall: the viewer's searches leave the notes' use as it was (closing a memory writes its
    # pending counts, so the control search is counted and the viewer's is not).
    with open_memory(memory.tenant) as looking:
        looking.search("chewed running shoes", mode="fulltext", count_use=False)
    assert memory.get(data.shoes).retrieval_count == 0
    with open_memory(memory.tenant) as recalling:
        recalling.search("chewed running shoes", mode="fulltext")
    assert memory.get(data.shoes).retrieval_count == 1

    then = api(viewer, "search", q="beagle named Max", as_of=data.before.isoformat())
    assert all(h["note"]["id"] != data.new_home for h in then["hits"])


def test_one_tenants_view_cannot_reach_another_tenant(viewer: Viewer, data: Sample) -> None:
    assert request(viewer, f"/api/note/{data.other}")[0] == 404
    assert request(viewer, f"/api/network?around={data.other}")[0] == 404
    found = api(viewer, "search", q="secret diary about the beagle", mode="hybrid")
    assert data.other not in {h["note"]["id"] for h in found["hits"]}
    assert data.other not in {n["note"]["id"] for n in api(viewer, "network", all=1)["notes"]}
    status, _, body = request(viewer, "/api/summary?tenant=" + data.other_tenant)
    assert status == 200 and json.loads(body)["tenant"] != data.other_tenant  # no view takes a tenant


def test_hostile_text_comes_back_as_data(viewer: Viewer, data: Sample) -> None:
    note = api(viewer, f"note/{data.hostile}")
    assert note["note"]["content"] == HOSTILE
    _, headers, _ = request(viewer, "/api/network")
    assert headers["Content-Type"].startswith("application/json") and headers["X-Content-Type-Options"] == "nosniff"


def test_without_the_token_everything_is_forbidden(viewer: Viewer) -> None:
    for path in ("/", "/static/viewer.js", "/api/summary", "/api/network", "/no-such-page"):
        assert request(viewer, path, token=None)[0] == 403, path
        assert request(viewer, path, token="wrong-" + viewer.token)[0] == 403, path
    status, headers, _ = request(viewer, "/", token=viewer.token)
    assert status == 200
    assert f"{viewer.cookie}={viewer.token}" in headers["Set-Cookie"] and "HttpOnly" in headers["Set-Cookie"]
    assert "SameSite=Strict" in headers["Set-Cookie"]
    assert request(viewer, "/api/summary", host=f"evil.example:{viewer.port}")[0] == 403  # DNS rebinding


def test_the_page_is_read_only_and_strict(viewer: Viewer) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert request(viewer, "/api/summary", method=method)[0] == 405
    _, headers, body = request(viewer, "/")
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
    assert headers["Referrer-Policy"] == "no-referrer"
    assert b"<script>" not in body and b"style=" not in body  # no inline code for the policy to allow
    assert request(viewer, "/static/../server.py")[0] == 404
    assert request(viewer, "/static/%2e%2e/server.py")[0] == 404
    assert request(viewer, "/api/network?as_of=yesterday")[0] == 400
    assert json.loads(request(viewer, "/api/network?limit=0")[2])["error"].startswith("limit")
    assert request(viewer, "/api/note/" + quote("no such note"))[0] == 400  # not an id
    assert request(viewer, "/api/note/no-such-note")[0] == 404
    assert request(viewer, "/api/note")[0] == 404 and request(viewer, "/api/summary/extra")[0] == 404


def test_the_command_prints_its_url_opens_it_serves_and_stops(
    cli_env: dict[str, str], cli_tenant: str, tmp_path: Path,
) -> None:
    with AgenticMemory(Settings.from_env(cli_env), tenant=cli_tenant) as memory:
        note = memory.add("Nate adopted a turtle named Shelly.")
    # The "browser": records what it was started with and the page it was given.
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {tmp_path}/argument\nstat -c %a "${{1#file://}}" > {tmp_path}/mode\n'
                       f'cp "${{1#file://}}" {tmp_path}/page.html\n')
    browser.chmod(0o755)
    command = [str(Path(sys.executable).parent / "amem-graph"), "view", "-t", cli_tenant, "--port", "0"]
    proc = subprocess.Popen(command, env={**os.environ, **cli_env, "BROWSER": str(browser)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = next(line.strip() for line in proc.stdout if line.startswith("http://127.0.0.1:"))
        base, token = url.split("/?token=")
        for _ in range(600):
            if (tmp_path / "page.html").exists() and (tmp_path / "page.html").stat().st_size:
                break
            time.sleep(0.1)
        opened = (tmp_path / "argument").read_text().strip()
        assert opened.startswith("file://") and token not in opened  # not on the browser's command line
        assert (tmp_path / "mode").read_text().strip() == "600" and url in (tmp_path / "page.html").read_text()
        with urllib.request.urlopen(f"{base}/api/note/{note.id}?token={token}", timeout=60) as response:
            assert json.loads(response.read())["note"]["content"] == "Nate adopted a turtle named Shelly."
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/api/summary", timeout=60)
        assert refused.value.code == 403
        port = int(base.rsplit(":", 1)[1])
        taken = subprocess.run([*command[:4], "--port", str(port), "--no-browser"], env={**os.environ, **cli_env},
                               capture_output=True, text=True, timeout=300, check=False)
        assert taken.returncode == 3 and f"port {port} is in use" in taken.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    assert not Path(opened.removeprefix("file://")).exists()  # the redirect page goes with the viewer


@pytest.mark.embedded
def test_the_vendored_script_is_the_pinned_release() -> None:
    for name, digest in VENDORED.items():
        assert hashlib.sha256(STATIC.joinpath("vendor", name).read_bytes()).hexdigest() == digest
    assert STATIC.joinpath("vendor", "cytoscape.LICENSE.txt").is_file()


@pytest.mark.embedded
def test_words_diff_keeps_every_character() -> None:
    ops = words_diff("Alice adopted a beagle named Max.", "Alice adopted  a beagle called Max!")
    assert "".join(t for op, t in ops if op != "+") == "Alice adopted a beagle named Max."
    assert "".join(t for op, t in ops if op != "-") == "Alice adopted  a beagle called Max!"
