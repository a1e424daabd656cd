/* The amem-graph viewer: draws what the server's JSON says, and nothing else. Every text from the memory (notes,
   reasons, names) reaches the page as a text node or a canvas label, never as markup. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    first: 0, now: 0, asOf: null, since: null, tab: "network", axis: "recorded", timeline: null, saidBefore: null,
    saidNotes: null,
    view: { kind: "overview" }, filters: {}, note: null, drawn: 0, opened: 0,
    panel: { kind: "notes" },  // what the right-hand panel shows: notes, note, entity, entities, tiers, search
  };
  let cy = null;

  // -- small helpers ------------------------------------------------------------------------------------------

  /** An element with properties and children; strings become text nodes. */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "on") for (const [name, fn] of Object.entries(value)) node.addEventListener(name, fn);
      else if (key === "data") for (const [name, v] of Object.entries(value)) node.dataset[name] = String(v);
      else node.setAttribute(key, String(value));
    }
    return put(node, children);
  }

  /** Appends children (arrays flattened; strings as text) to `parent`. */
  function put(parent, ...children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return parent;
  }

  const short = (text, n = 48) => {
    const flat = String(text || "").replace(/\s+/g, " ").trim();
    return flat.length > n ? flat.slice(0, n - 1) + "…" : flat;
  };
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : "—");
  const num = (x, digits = 3) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));

  function status(text, error = false) {
    const bar = $("status");
    bar.textContent = text;
    bar.classList.toggle("error", error);
  }

  async function api(path, params) {
    const url = new URL("api/" + path, location.origin + "/");
    for (const [name, value] of Object.entries(params || {})) {
      if (value === null || value === undefined || value === "" || value === false) continue;
      for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, one === true ? "1" : one);
    }
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    const data = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(data.error || String(response.status));
    return data;
  }

  // Recorded time: the memory as it stood at a moment; said time: the notes the conversation had said by the end of
  // a session (or day), whenever they were written.
  const moment = () => (state.axis === "said" ? { before: state.saidBefore } : { as_of: state.asOf, since: state.since });

  // -- the graph ----------------------------------------------------------------------------------------------

  const STYLE = [
    { selector: "node", style: {
      "label": "data(label)", "font-size": 9, "color": "#1d2330",
      "background-color": "#4c8bf5", "width": 14, "height": 14, "text-valign": "bottom", "text-margin-y": 3,
    } },
    { selector: "node.superseded", style: { "background-color": "#9aa3b2", "border-width": 2, "border-style": "dashed", "border-color": "#5d6677" } },
    { selector: "node.archived", style: { "background-color": "#c9a46b", "opacity": 0.7 } },
    { selector: "node.entity", style: { "shape": "diamond", "background-color": "#8a5cc7", "width": 12, "height": 12, "font-size": 8, "color": "#5b3a8a" } },
    { selector: "node.centre", style: { "width": 24, "height": 24, "border-width": 3, "border-color": "#1d2330" } },
    { selector: "node.hit", style: { "width": 20, "height": 20, "background-color": "#2f6fdf", "font-size": 10, "font-weight": "bold" } },
    { selector: "node.via", style: { "background-color": "#b7c7e6" } },
    { selector: "node.ch-added", style: { "border-width": 4, "border-color": "#1f9d55" } },
    { selector: "node.ch-changed, node.ch-restored", style: { "border-width": 4, "border-color": "#e08a00" } },
    { selector: "node.ch-superseded, node.ch-archived", style: { "border-width": 4, "border-color": "#d64545" } },
    { selector: "node:selected", style: { "border-width": 4, "border-color": "#111", "border-style": "solid" } },
    { selector: "edge", style: {
      "width": 1.5, "line-color": "#9fb3d9", "curve-style": "bezier", "target-arrow-shape": "triangle",
      "target-arrow-color": "#9fb3d9", "arrow-scale": 0.7, "font-size": 7, "color": "#5d6677",
      "text-rotation": "autorotate", "label": "data(label)",
    } },
    { selector: "edge.CONTRADICTS", style: { "line-color": "#d64545", "target-arrow-color": "#d64545" } },
    { selector: "edge.next", style: { "line-style": "dashed", "line-color": "#cfd5df", "target-arrow-color": "#cfd5df", "width": 1 } },
    { selector: "edge.mention", style: { "line-style": "dotted", "line-color": "#c9b3e8", "target-arrow-shape": "none", "width": 1, "label": "" } },
    { selector: "edge.path", style: { "width": 3, "line-color": "#2f6fdf", "target-arrow-color": "#2f6fdf", "font-size": 9 } },
    { selector: "edge.ch-added", style: { "line-color": "#1f9d55", "target-arrow-color": "#1f9d55", "width": 3 } },
    { selector: "edge.ch-ended", style: { "line-color": "#d64545", "target-arrow-color": "#d64545", "line-style": "dashed", "width": 2 } },
  ];

  /** Draws the elements. With `keep`, nodes drawn before keep their places, so that a redraw (another moment,
      another filter) moves only what changed: with every node placed, nothing moves; with most, the layout starts
      from them. */
  function draw(elements, layout, message, { keep = true } = {}) {
    const graph = $("graph");
    graph.dataset.ready = "0";
    const placed = new Map(cy && keep ? cy.nodes().map((n) => [n.id(), { ...n.position() }]) : []);
    const nodes = elements.filter((e) => e.group === "nodes");
    const known = nodes.filter((e) => placed.has(e.data.id));
    for (const e of known) e.position = placed.get(e.data.id);
    const still = nodes.length > 0 && known.length === nodes.length;
    const viewport = cy && still ? { zoom: cy.zoom(), pan: { ...cy.pan() } } : null;
    if (still) layout = { name: "preset", fit: false };
    else if (known.length * 2 > nodes.length && layout.name === "cose") layout = { ...layout, randomize: false };
    if (cy) cy.destroy();
    performance.mark("amem-draw");
    // "preset": no layout at construction (the default would lay everything out on a grid first).
    // The wheel zooms at Cytoscape's own pace: a custom sensitivity makes it warn on every draw.
    cy = cytoscape({ container: graph, elements, style: STYLE, layout: { name: "preset" }, minZoom: 0.1, maxZoom: 4 });
    cy.on("tap", "node", (event) => {
      const data = event.target.data();
      if (data.kind === "note") showNote(data.id);
      else if (data.kind === "entity") showEntity(data.name);
    });
    performance.mark("amem-layout-start");
    cy.one("layoutstop", () => {
      performance.mark("amem-layout-stop");
      if (viewport) cy.viewport(viewport);
      else {
        cy.fit(undefined, 45);  // room for the labels under the outermost nodes
        if (cy.zoom() > 1.4) cy.zoom({ level: 1.4, renderedPosition: { x: graph.clientWidth / 2, y: graph.clientHeight / 2 } });
      }
      if (state.note) cy.getElementById(state.note).select();
      graph.dataset.nodes = String(cy.nodes().length);
      graph.dataset.ready = "1";
    });
    cy.layout(layout).run();
    status(message);
    window.amemViewer.cy = cy;
  }

  const noteNode = (note, classes, extra = {}) => ({
    group: "nodes", classes,
    data: { id: note.id, kind: "note", label: short(note.content, 40), ...extra },
  });

  function networkElements(data, { entities = 2 } = {}) {
    const els = [];
    for (const item of data.notes) {
      const classes = [item.state, item.change ? "ch-" + item.change : "", item.hops === 0 ? "centre" : ""].join(" ");
      els.push(noteNode(item.note, classes));
    }
    for (const link of data.links) {
      els.push({ group: "edges", classes: [link.type, link.change ? "ch-" + link.change : ""].join(" "),
        data: { id: `l:${link.source_id}>${link.target_id}:${link.type}`, source: link.source_id, target: link.target_id,
          label: link.type, kind: "link" } });
    }
    for (const [a, b] of data.session_steps) {
      els.push({ group: "edges", classes: "next", data: { id: `n:${a}>${b}`, source: a, target: b, label: "", kind: "next" } });
    }
    const byEntity = new Map();
    for (const [noteId, key] of data.mentions) {
      const entry = byEntity.get(key) || { entity: data.entities[key], notes: [] };
      entry.notes.push(noteId);
      byEntity.set(key, entry);
    }
    // In a large graph, an entity that many notes mention (a chat's speaker) would tie everything to everything.
    const most = data.notes.length >= 30 ? Math.floor(data.notes.length / 3) : Infinity;
    const shown = [...byEntity.values()].filter((e) => e.notes.length >= entities && e.notes.length <= most)
      .sort((a, b) => b.notes.length - a.notes.length).slice(0, 20);
    for (const { entity, notes } of shown) {
      const id = "e:" + entity.key;
      els.push({ group: "nodes", classes: "entity", data: { id, kind: "entity", name: entity.name, label: entity.name } });
      for (const noteId of notes) {
        els.push({ group: "edges", classes: "mention", data: { id: `m:${noteId}>${id}`, source: noteId, target: id, kind: "mention" } });
      }
    }
    return els;
  }

  const COSE = { name: "cose", animate: false, randomize: true, numIter: 300, nodeRepulsion: () => 12000,
    idealEdgeLength: () => 80, nodeOverlap: 20, nodeDimensionsIncludeLabels: true, padding: 20 };

  /** A ticket for a graph about to be drawn: an answer that comes back after a newer ticket was taken is dropped,
      so a slower, older request never draws over a newer one. */
  const ticket = () => ++state.drawn;
  const stale = (mine) => mine !== state.drawn;

  async function showNetwork() {
    $("graph").dataset.ready = "0";
    status("Loading the network…");
    const view = state.view;
    const mine = ticket();
    try {
      if (view.kind === "around") {
        const data = await api("network", { around: view.id, hops: view.hops || 1, ...moment() });
        if (stale(mine)) return;
        const byHops = new Map(data.notes.map((n) => [n.note.id, n.hops]));
        draw(networkElements(data, { entities: 1 }),
          { name: "concentric", concentric: (node) => 10 - (byHops.get(node.id()) ?? 3), levelWidth: () => 1, minNodeSpacing: 24, animate: false },
          `The neighbourhood of a note: ${data.notes.length} notes within ${view.hops || 1} step(s)` + (data.more ? " (the nearest; more lie beyond)" : "") + asOfText());
        return;
      }
      const data = await api("network", { ...state.filters, ...moment() });
      if (stale(mine)) return;
      const shown = data.notes.length;
      draw(networkElements(data), COSE,
        (shown ? `${shown} notes, newest first` : "No note matches") + (data.more ? " — more match: filter, or open a note's neighbourhood" : "") + asOfText());
      if (state.panel.kind === "notes" && state.tab === "network") listNotes(data, claim({ kind: "notes" }));
    } catch (err) {
      if (!stale(mine)) status(err.message, true);
    }
  }

  const asOfText = () => (state.asOf ? ` · as of ${when(state.asOf)}` : "") + (state.since ? ` · changes since ${when(state.since)} marked` : "");

  function listNotes(data, fresh) {
    if (!fresh()) return;
    const box = details("Notes shown");
    if (!data.notes.length) put(box, el("p", { class: "empty" }, "No note matches."));
    for (const item of data.notes) {
      put(box, el("div", { class: "item note-row", data: { noteId: item.note.id }, on: { click: () => showNote(item.note.id) } },
        badge(item.state), item.change ? badge(item.change) : null,
        el("span", { class: "text" }, short(item.note.content, 160))));
    }
  }

  // -- details ------------------------------------------------------------------------------------------------

  /** The panel is `panel` from now on; the returned check says whether that is still so when an answer arrives
      (a later click, tab or moment claims it again, and the older answer is dropped). */
  function claim(panel) {
    state.panel = panel;
    state.note = panel.kind === "note" ? panel.id : null;
    const mine = ++state.opened;
    return () => mine === state.opened;
  }

  function details(title, props) {
    const box = $("details");
    box.replaceChildren(el("h2", null, title));
    delete box.dataset.noteId;
    for (const [k, v] of Object.entries(props || {})) box.dataset[k] = v;
    return box;
  }

  const badge = (name) => el("span", { class: "badge " + name }, name);
  const labels = (values) => (values && values.length ? values.map((v) => el("span", { class: "label" }, v)) : el("span", { class: "empty" }, "none"));

  function diff(ops) {
    return el("div", { class: "diff text" }, ops.map(([op, text]) => (op === "=" ? text : el(op === "+" ? "ins" : "del", null, text))));
  }

  async function showNote(id) {
    const fresh = claim({ kind: "note", id });
    try {
      const data = await api("note/" + encodeURIComponent(id), moment());
      if (!fresh()) return;  // another note, panel or moment was asked for since
      renderNote(data);
      if (cy) {
        cy.$(":selected").unselect();
        cy.getElementById(id).select();
      }
    } catch (err) {
      if (!fresh()) return;
      state.note = null;
      const box = details("Note");
      put(box, el("p", { class: "empty" }, err.message));
    }
  }

  function renderNote(data) {
    const note = data.note;
    const box = details("Note", { noteId: note.id, version: note.version, state: data.state });
    put(box, 
      el("div", null, badge(data.state), el("span", { class: "meta" }, `${note.id} · version ${note.version}`)),
      el("div", { class: "meta" }, [note.speaker ? `said by ${note.speaker}` : null, note.session ? `session ${note.session} #${note.seq ?? "?"}` : null,
        `recorded ${when(note.created_at)}`, note.event_time ? `said ${when(note.event_time)}` : null,
        `analysis ${note.analysis}${note.model ? " (" + note.model + ")" : ""}`].filter(Boolean).join(" · ")),
      el("div", { class: "content text", id: "note-content" }, note.content),
      el("div", { class: "row" },
        el("button", { type: "button", id: "open-around", on: { click: () => openAround(note.id) } }, "Its neighbourhood"),
        el("button", { type: "button", on: { click: () => { claim({ kind: "notes" }); showNetwork(); } } }, "Back to the network")),
      el("h3", null, "Context"), note.context ? el("div", { class: "text" }, note.context) : el("div", { class: "empty" }, "none"),
      el("h3", null, "Keywords"), el("div", null, labels(note.keywords)),
      el("h3", null, "Tags"), el("div", null, labels(note.tags)),
    );
    if (data.passages.length) {
      put(box, el("h3", null, `Passages (${data.passages.length})`),
        data.passages.map((p) => el("div", { class: "item" }, el("span", { class: "meta" }, `characters ${p.start}–${p.end}: `),
          el("span", { class: "text" }, short(note.content.slice(p.start, p.end), 160)))));
    }
    put(box, el("h3", null, `Versions (${data.changes.length} change${data.changes.length === 1 ? "" : "s"})`));
    if (!data.changes.length) put(box, el("div", { class: "empty" }, "Unchanged since it was recorded."));
    for (const change of data.changes) {
      const parts = [el("div", { class: "meta" }, `version ${change.version} → ${change.to_version} · ${when(change.at)} · ${change.reason}`)];
      if (change.content.some(([op]) => op !== "=")) parts.push(el("div", { class: "meta" }, "content"), diff(change.content));
      if (change.context.some(([op]) => op !== "=")) parts.push(el("div", { class: "meta" }, "context"), diff(change.context));
      for (const field of ["keywords", "tags"]) {
        const d = change[field];
        if (d.added.length || d.removed.length) {
          parts.push(el("div", { class: "diff" }, el("span", { class: "meta" }, field + " "),
            d.removed.map((x) => el("del", null, x + " ")), d.added.map((x) => el("ins", null, x + " "))));
        }
      }
      put(box, el("div", { class: "item change", data: { version: change.version } }, parts));
    }
    put(box, el("h3", null, `Evolutions (${data.evolutions.length})`));
    if (!data.evolutions.length) put(box, el("div", { class: "empty" }, "none"));
    for (const evo of data.evolutions) {
      const own = evo.trigger_note_id === note.id;
      put(box, el("div", { class: "item evolution" },
        el("div", { class: "meta" }, `${when(evo.at)} · ${evo.analysis}${evo.model ? " " + evo.model : ""} · ` +
          (own ? "this note's own analysis" : "when a later note arrived")),
        own ? null : el("a", { href: "#", on: { click: (e) => { e.preventDefault(); showNote(evo.trigger_note_id); } } }, "open the note that triggered it"),
        reasons(evo.decision),
        el("details", null, el("summary", null, "the decision as recorded"), el("pre", { class: "text" }, JSON.stringify(evo.decision, null, 2)))));
    }
    if (data.superseded_by.length) {
      put(box, el("h3", null, "Superseded by"), data.superseded_by.map((s) => el("div", { class: "item link", on: { click: () => showNote(s.newer_id) } },
        el("div", { class: "meta" }, when(s.at)), el("div", { class: "text" }, s.reason), s.newer ? el("div", { class: "text" }, short(s.newer.content, 200)) : null)));
    }
    put(box, el("h3", null, `Links (${data.links.length})`));
    if (!data.links.length) put(box, el("div", { class: "empty" }, "none"));
    for (const link of data.links) {
      put(box, el("div", { class: "item link", data: { other: link.other_id }, on: { click: () => showNote(link.other_id) } },
        el("div", null, el("span", { class: "label" }, (link.outgoing ? "→ " : "← ") + link.type), el("span", { class: "meta" }, `confidence ${num(link.confidence, 2)}`),
          link.valid ? null : badge("ended")),
        link.reason ? el("div", { class: "text" }, link.reason) : null,
        el("div", { class: "text meta" }, link.other ? short(link.other.content, 200) : link.other_id)));
    }
    put(box, el("h3", null, "Entities"));
    if (!data.entities.length) put(box, el("div", { class: "empty" }, "none"));
    put(box, el("div", null, data.entities.map((e) => el("span", { class: "label entity-row", on: { click: () => showEntity(e.name) } }, `${e.name} (${e.kind})`))));
  }

  /** The reasons an analyser gave, wherever its decision keeps them. */
  function reasons(decision) {
    const found = [];
    const walk = (value, where) => {
      if (Array.isArray(value)) value.forEach((v) => walk(v, where));
      else if (value && typeof value === "object") {
        for (const [k, v] of Object.entries(value)) {
          if (k === "reason" && typeof v === "string" && v) found.push([where, v, value]);
          else walk(v, k);
        }
      }
    };
    walk(decision, "");
    if (!found.length) return null;
    return el("ul", null, found.map(([where, reason, item]) => el("li", { class: "text" },
      `${where}${item.type ? " " + item.type : ""}${item.id || item.target_id ? " " + short(item.id || item.target_id, 10) : ""}: ${reason}`)));
  }

  function openAround(id) {
    state.view = { kind: "around", id, hops: 1 };
    showNetwork();
  }

  // -- search -------------------------------------------------------------------------------------------------

  async function runSearch(q = $("query").value.trim()) {
    if (!q) {
      const box = details("Search");
      put(box, el("p", { class: "empty" }, "Type a few words to search for (what was said, who said it, a place), then press Enter."));
      box.scrollTop = 0;
      status("Type a few words to search for.");
      return;
    }
    state.view = { kind: "search", q };
    const fresh = claim({ kind: "search" });
    $("graph").dataset.ready = "0";
    status("Searching…");
    const mine = ticket();
    try {
      const data = await api("search", { q, mode: $("mode").value, hops: $("hops").value, all: $("f-all").checked, as_of: state.asOf });
      if (!stale(mine) && fresh()) renderSearch(data);
    } catch (err) {
      if (!stale(mine)) status(err.message, true);
    }
  }

  function renderSearch(data) {
    const els = [];
    const seen = new Set();
    for (const hit of data.hits) {
      els.push(noteNode(hit.note, "hit " + hit.note.state, { label: `#${hit.rank} ${short(hit.note.content, 36)}`, rank: hit.rank }));
      seen.add(hit.note.id);
    }
    for (const note of data.path_notes) if (!seen.has(note.id)) { els.push(noteNode(note, "via " + note.state)); seen.add(note.id); }
    const joined = new Set();  // pairs a path already draws: their link is not drawn twice
    for (const hit of data.hits) {
      hit.path.forEach((step, i) => {
        const to = i + 1 < hit.path.length ? hit.path[i + 1].from_id : hit.note.id;
        if (seen.has(step.from_id) && seen.has(to)) {
          els.push({ group: "edges", classes: "path " + step.type, data: { id: `p:${hit.rank}:${i}`, source: step.from_id, target: to, label: step.type, kind: "path" } });
          joined.add(`${step.from_id}|${to}`).add(`${to}|${step.from_id}`);
        }
      });
    }
    for (const link of data.links || []) {
      if (joined.has(`${link.source}|${link.target}`)) continue;
      joined.add(`${link.source}|${link.target}`).add(`${link.target}|${link.source}`);
      els.push({ group: "edges", classes: "link " + link.type, data: { id: `l:${link.source}:${link.target}:${link.type}`, source: link.source, target: link.target, label: link.type, kind: "link" } });
    }
    // Hits in rank order, two to a row (the notes on their paths after them): a force layout would pile up the
    // unlinked seeds of a search, labels over labels.
    const SEARCH = { name: "grid", cols: 2, avoidOverlap: true, nodeDimensionsIncludeLabels: true, padding: 20,
      sort: (a, b) => (a.data("rank") ?? 1e9) - (b.data("rank") ?? 1e9) };
    draw(els, SEARCH, `${data.hits.length} hits for “${short(data.query, 60)}”` + (state.asOf ? ` · as of ${when(state.asOf)}` : ""),
      { keep: false });
    const box = details("Search", { query: data.query });
    box.scrollTop = 0;  // a new answer starts at its first hit, whatever the panel showed before
    if (!data.hits.length) put(box, el("p", { class: "empty" }, "Nothing found."));
    const content = new Map([...data.hits.map((h) => [h.note.id, h.note.content]), ...data.path_notes.map((n) => [n.id, n.content])]);
    for (const hit of data.hits) {
      const scores = [`score ${num(hit.score)}`, `vector ${num(hit.vector_score)}`, `fulltext ${num(hit.fulltext_score)}`, `seed ${num(hit.seed_score)}`];
      const boosts = Object.entries(hit.boosts || {}).map(([name, amount]) => `${name} +${num(amount)}`);
      put(box, el("div", { class: "item hit", data: { noteId: hit.note.id, hops: hit.hops }, on: { click: () => showNote(hit.note.id) } },
        el("div", null, el("strong", null, `#${hit.rank} `), badge(hit.note.state), el("span", { class: "meta found" }, hit.found)),
        el("div", { class: "text" }, marked(hit.note.content, hit.match.spans, hit.match.excerpt)),
        hit.match.around.length ? el("div", { class: "around" },
          el("div", { class: "meta" }, `matched through the turns around it: ${hit.match.around.join(", ")}`),
          el("div", { class: "text" }, marked(hit.note.neighbourhood || "", hit.match.around_spans, null))) : null,
        el("div", { class: "scores" }, scores.join(" · ") + (boosts.length ? " · priors " + boosts.join(", ") : "")),
        hit.passage ? el("div", { class: "meta" }, `matched the passage at characters ${hit.passage[0]}–${hit.passage[1]}`) : null,
        hit.path.length ? el("div", { class: "path" }, "path: ",
          hit.path.map((step, i) => [el("span", { class: "step" }, i === 0 ? `seed “${short(content.get(step.from_id), 40)}”` : `“${short(content.get(step.from_id), 30)}”`),
            ` → ${step.type}${step.reason ? " (" + short(step.reason, 80) + ")" : ""} → `]), el("span", { class: "step" }, "this note")) : null));
    }
  }

  // The text with the matched words marked; of a long text, the excerpt that holds them (between "…").
  function marked(text, spans, excerpt) {
    const [from, to] = excerpt || [0, text.length];
    const parts = from > 0 ? ["…"] : [];
    let at = from;
    for (const [start, end] of spans) {
      if (start < at || end > to) continue;
      parts.push(text.slice(at, start), el("mark", null, text.slice(start, end)));
      at = end;
    }
    parts.push(text.slice(at, to));
    if (to < text.length) parts.push("…");
    return parts;
  }

  // -- entities and tiers ---------------------------------------------------------------------------------------

  async function showEntities() {
    const fresh = claim({ kind: "entities" });
    try {
      const data = await api("entities", moment());
      if (!fresh()) return;
      const box = details(`Entities (${data.entities.length})`);
      if (!data.entities.length) put(box, el("p", { class: "empty" }, "No entity yet."));
      for (const e of data.entities) {
        put(box, el("div", { class: "item entity-row", on: { click: () => showEntity(e.name) } },
          el("strong", null, e.name), el("span", { class: "meta" }, ` ${e.kind} · ${e.mentions} mention${e.mentions === 1 ? "" : "s"}`)));
      }
    } catch (err) { if (fresh()) status(err.message, true); }
  }

  async function showEntity(name) {
    const fresh = claim({ kind: "entity", name });
    try {
      const data = await api("entity/" + encodeURIComponent(name), moment());
      if (!fresh()) return;
      const e = data.entity;
      const box = details(e.name, { entity: e.key });
      const most = Math.max(1, ...data.months.map(([, n]) => n));
      put(box, 
        el("div", { class: "meta" }, `${e.kind} · ${e.mentions} mentions · first ${when(e.first_seen)} · last ${when(e.last_seen)}`),
        e.aliases.length ? el("div", null, el("span", { class: "meta" }, "also called "), labels(e.aliases)) : null,
        e.alias_of ? el("div", { class: "meta" }, `merged into ${e.alias_of}`) : null,
        el("button", { type: "button", on: { click: () => { $("f-entity").value = e.name; applyFilters(); } } }, "Its notes in the network"),
        el("h3", null, "Mentions over time"),
        el("div", { class: "bars" }, data.months.map(([month, n]) => {
          const bar = el("div", { class: "bar", title: `${n}` });
          bar.style.width = `${Math.round((100 * n) / most)}%`;
          return el("div", { class: "row" }, el("span", null, month), el("span", null, bar));
        })),
        el("h3", null, `Merges (${data.merges.length})`),
        data.merges.length ? data.merges.map((m) => el("div", { class: "item" }, `${m.alias} → ${m.into} · ${m.by} · ${when(m.at)}`,
          m.ended_at ? ` · undone ${when(m.ended_at)}` : "", el("div", { class: "text meta" }, m.reason))) : el("div", { class: "empty" }, "none"),
        el("h3", null, "Mentioned with"),
        el("div", null, data.related.length ? data.related.map((r) => el("span", { class: "label entity-row", on: { click: () => showEntity(r.entity.name) } }, `${r.entity.name} (${r.notes})`)) : el("span", { class: "empty" }, "none")),
        el("h3", null, `Notes (${data.notes.length})`),
        data.notes.map((n) => el("div", { class: "item note-row", on: { click: () => showNote(n.id) } }, badge(n.state), el("span", { class: "text" }, short(n.content, 160)))),
      );
    } catch (err) { if (fresh()) status(err.message, true); }
  }

  async function showTiers() {
    const fresh = claim({ kind: "tiers" });
    try {
      const data = await api("tiers");
      if (!fresh()) return;
      const box = details("MemoryOS tiers");
      if (state.asOf) put(box, el("p", { class: "meta" }, "The tiers as they are now (the slider moves the notes)."));
      const sessions = Object.entries(data.sessions);
      put(box, el("h3", null, `Sessions (${sessions.length})`),
        sessions.length ? sessions.map(([s, n]) => el("div", { class: "item" }, `${s}: ${n} page${n === 1 ? "" : "s"}`)) : el("div", { class: "empty" }, "No dialogue turns (add_turn) yet."));
      put(box, el("h3", null, `Short-term pages (${data.short_term.length})`),
        data.short_term.map((p) => el("div", { class: "item" }, el("div", { class: "meta" }, `${p.session_id} #${p.seq} · ${when(p.at)}`),
          el("div", { class: "text" }, p.user_text), p.assistant_text ? el("div", { class: "text meta" }, "Assistant: " + p.assistant_text) : null)));
      put(box, el("h3", null, `Segments by heat (${data.segments.length})`),
        data.segments.map((s) => el("div", { class: "item segment" }, el("div", null, el("span", { class: "heat" }, `heat ${num(s.heat, 2)}`),
          el("span", { class: "meta" }, ` · ${s.pages} pages · ${s.visits} visits${s.archived_at ? " · archived" : ""}`)),
        el("div", { class: "text" }, s.summary), el("div", null, labels(s.keywords)))));
      put(box, el("h3", null, `Persona (${data.persona.length})`),
        data.persona.map((f) => el("div", { class: "item" }, el("span", { class: "label" }, f.kind), el("span", { class: "text" }, f.text),
          el("span", { class: "meta" }, ` · confidence ${num(f.confidence, 2)} · ${f.mentions}×`))));
    } catch (err) { if (fresh()) status(err.message, true); }
  }

  // -- controls -----------------------------------------------------------------------------------------------

  function applyFilters() {
    const value = (id) => $(id).value.trim();
    const day = (id) => (value(id) ? value(id) + "T00:00:00Z" : null);
    state.filters = { tag: value("f-tag"), speaker: value("f-speaker"), entity: value("f-entity"), session: value("f-session"),
      after: day("f-after"), before: day("f-before"), all: $("f-all").checked };
    state.view = { kind: "overview" };
    claim({ kind: "notes" });
    selectTab("network");
  }

  function selectTab(tab) {
    state.tab = tab;
    for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === tab);
    if (tab === "entities") showEntities();
    else if (tab === "tiers") showTiers();
    else {
      if (state.panel.kind !== "note") claim({ kind: "notes" });
      if (state.view.kind === "search") state.view = { kind: "overview" };  // the network tab shows the network
      showNetwork();
    }
  }

  function timeChanged() {
    const slider = $("as-of");
    const value = Number(slider.value);
    if (state.axis === "said") {
      const steps = state.timeline.steps;
      const step = steps[Math.min(value, steps.length - 1)];
      const last = value >= steps.length - 1;
      state.asOf = state.since = null;
      state.saidBefore = last ? null : steps[value + 1].at;
      state.saidNotes = last ? null : step.notes;
      $("as-of-label").textContent = `${step.label} · ${step.at.slice(0, 10)}${last ? " (the last)" : ""}`;
      $("since-label").textContent = "";
      if (state.summary) header(state.summary);
      return;
    }
    state.asOf = value >= state.now ? null : new Date(value).toISOString();
    $("as-of-label").textContent = state.asOf ? when(state.asOf) : "now";
    const since = $("since");
    since.max = String(value);
    if ($("compare").checked) {
      const s = Math.min(Number(since.value), value - 1);
      state.since = new Date(s).toISOString();
      $("since-label").textContent = when(state.since);
    } else {
      state.since = null;
      $("since-label").textContent = "";
    }
  }

  /** The slider over recorded time (milliseconds, as of a moment) or said time (a step per session or day). */
  async function switchAxis() {
    const axis = $("axis").value;
    const slider = $("as-of");
    if (axis === "said") {
      try {
        state.timeline = state.timeline || await api("timeline");
      } catch (err) {
        status(err.message, true);
        $("axis").value = "recorded";
        return;
      }
      if (!state.timeline.steps.length) {
        status("No note says when it happened (no event time): the memory has only the time it was recorded.");
        $("axis").value = "recorded";
        return;
      }
      state.axis = "said";
      slider.min = "0";
      slider.max = String(state.timeline.steps.length - 1);
      slider.value = slider.max;
      $("compare").checked = false;
      $("compare").disabled = $("since").disabled = $("now").disabled = true;
    } else {
      state.axis = "recorded";
      state.saidBefore = state.saidNotes = null;
      slider.min = String(state.first - 1);
      slider.max = String(state.now);
      slider.value = String(state.now);
      $("compare").disabled = $("now").disabled = false;
    }
    redraw();
    if (state.summary) header(state.summary);
  }

  /** Another moment: the graph and the panel again, as of it (the tiers are today's: their panel stays). */
  function redraw() {
    timeChanged();
    const panel = state.panel;
    if (state.view.kind === "search") runSearch(state.view.q);
    else showNetwork();
    if (panel.kind === "note") showNote(panel.id);
    else if (panel.kind === "entity") showEntity(panel.name);
    else if (panel.kind === "entities") showEntities();
  }

  function legend() {
    const items = [["current", "current"], ["superseded", "superseded"], ["archived", "archived"], ["entity", "entity"],
      ["added", "added since"], ["changed", "changed since"]];
    put($("legend"), el("h3", null, "Legend"), items.map(([cls, text]) => el("div", null, el("span", { class: "swatch " + cls }), text)),
      el("div", null, "dashed: session order · dotted: mentions · red dashed: a link ended since"));
  }

  // A tenant that holds nothing: say so, and name the tenants that hold something (a typo is the usual cause).
  function emptyTenant(summary) {
    const box = details(`Tenant “${summary.tenant}” holds nothing`);
    box.dataset.empty = "1";
    put(box, el("p", null, summary.tenants.length
      ? "Nothing is stored under this tenant yet. The tenants that hold something here:"
      : "Nothing is stored under this tenant, nor under any other: this store is empty."),
    summary.tenants.length ? el("ul", { class: "tenants" }, summary.tenants.map((t) => el("li", null, el("code", null, t)))) : null,
    el("p", { class: "meta" }, "Open one with amem-graph view -t NAME; this page shows what this tenant's writes add when it is reloaded."));
    status(`Tenant “${summary.tenant}” holds nothing${summary.tenants.length ? ": see the tenants that do" : ""}.`);
  }

  function header(summary) {
    state.summary = summary;
    const c = summary.counts;
    if (state.saidNotes !== null) {  // the slider in said time: the notes said by then
      $("counts").textContent = `${state.saidNotes} of ${c.Note || 0} notes said by then`;
      return;
    }
    const queue = summary.queue && summary.queue.pending
      ? ` · ${summary.queue.pending} waiting for the model's analysis (the oldest ${Math.round(summary.queue.lag_s)} s)` : "";
    $("counts").textContent = `${c.Note || 0} notes · ${c.Entity || 0} entities · ${c.Page || 0} pages · ${c.Segment || 0} segments · ${c.Fact || 0} facts${queue}`;
  }

  // The memory as an agent writes it: the counts follow every few seconds; while the page shows the network as it
  // is now (the slider at "now", no note or search open), the new notes are drawn too.
  const FOLLOW_MS = 1500;
  async function follow() {
    if (document.hidden) return;
    let summary;
    try {
      summary = await api("summary");
    } catch (err) {
      return;  // the next look tries again
    }
    header(summary);
    const counted = JSON.stringify(summary.counts);
    if (counted === state.counted) return;
    state.counted = counted;
    const atNow = state.asOf === null;
    state.now = Date.parse(summary.now);
    if (state.axis === "said") return;  // its steps are read when the slider switches to said time
    for (const id of ["as-of", "since"]) $(id).max = String(state.now);
    if (atNow) $("as-of").value = String(state.now);
    if (atNow && state.view.kind === "overview" && state.panel.kind === "notes" && state.tab === "network") showNetwork();
  }

  async function start() {
    window.amemViewer = { cy: null, state };
    if (new URLSearchParams(location.search).has("token")) history.replaceState(null, "", location.pathname);
    legend();
    showNetwork();  // beside the summary: the graph needs nothing from it
    $("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
    $("filters").addEventListener("submit", (e) => { e.preventDefault(); applyFilters(); });
    $("clear").addEventListener("click", () => { $("filters").reset(); applyFilters(); });
    for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => selectTab(button.dataset.tab));
    suggest();
    try {
      const summary = await api("summary");
      $("tenant").textContent = `${summary.tenant} (${summary.store})`;
      header(summary);
      state.counted = JSON.stringify(summary.counts);
      if (summary.empty) emptyTenant(summary);
      state.now = Date.parse(summary.now);
      state.first = summary.first ? Date.parse(summary.first) : state.now - 1;
      for (const id of ["as-of", "since"]) {
        $(id).min = String(state.first - 1);
        $(id).max = String(state.now);
      }
      $("as-of").value = String(state.now);
      $("since").value = String(state.first - 1);

    } catch (err) {  // the time controls need the summary's span; the rest works without it
      status(err.message, true);
      return;
    }
    setInterval(follow, FOLLOW_MS);
    $("axis").addEventListener("change", switchAxis);
    $("as-of").addEventListener("input", timeChanged);
    $("as-of").addEventListener("change", redraw);
    $("since").addEventListener("input", timeChanged);
    $("since").addEventListener("change", redraw);
    $("compare").addEventListener("change", () => { $("since").disabled = !$("compare").checked; redraw(); });
    $("now").addEventListener("click", () => { $("as-of").value = String(state.now); redraw(); });
  }

  /** The filters' suggestions, read after the first view: they wait for nothing else. */
  async function suggest() {
    try {
      const found = await api("suggest");
      const lists = { tags: "l-tag", speakers: "l-speaker", sessions: "l-session", entities: "l-entity" };
      for (const [name, list] of Object.entries(lists)) $(list).replaceChildren(...found[name].map((v) => el("option", { value: v })));
    } catch (err) {
      status(err.message, true);
    }
  }

  document.addEventListener("DOMContentLoaded", start);
})();
