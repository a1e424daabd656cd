/* The amem-graph viewer: draws what the server's JSON says, and nothing else. Every text from the memory (notes,
   reasons, names) reaches the page as a text node or a canvas label, never as markup. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    asOf: null, since: null, saidBefore: null, tab: "network", axis: "recorded", slider: null, positions: null,
    position: null,  // the slider's step, null at its end (now)
    sliderLoads: 0,
    view: { kind: "overview" }, trail: [], filters: {}, note: null, drawn: 0, opened: 0,
    panel: { kind: "notes" },  // what the right-hand panel shows: notes, note, entity, entities, tiers, search
  };
  let cy = null;
  let firstDrawn = () => {};  // called when a graph is drawn: the first call lets the slider load

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

  const FONT = 12;  // labels' size at zoom 1: the page never opens a graph below READABLE of it
  const READABLE = 0.85;
  const STYLE = [
    { selector: "node", style: {
      "label": "data(label)", "font-size": FONT, "color": "#1d2330", "background-color": "#4c8bf5", "width": 14,
      "height": 14, "text-valign": "center", "text-halign": "right", "text-margin-x": 6, "text-wrap": "ellipsis",
      "text-max-width": "230px", "text-background-color": "#ffffff", "text-background-opacity": 0.85,
      "text-background-padding": "1px",
    } },
    { selector: "node.step", style: { "shape": "round-rectangle", "width": "data(size)", "height": 16, "background-color": "#4c8bf5" } },
    { selector: "node.group", style: { "background-color": "#2f6fdf", "border-width": 2, "border-color": "#1d2330" } },
    { selector: "node.header", style: { "width": 4, "height": 4, "background-color": "#5d6677", "font-weight": "bold", "color": "#5d6677" } },
    { selector: "node.superseded", style: { "background-color": "#9aa3b2", "border-width": 2, "border-style": "dashed", "border-color": "#5d6677" } },
    { selector: "node.archived", style: { "background-color": "#c9a46b", "opacity": 0.7 } },
    { selector: "node.entity", style: { "shape": "diamond", "background-color": "#8a5cc7", "width": "data(size)", "height": "data(size)", "color": "#5b3a8a", "text-max-width": "150px" } },
    { selector: "node.topic", style: { "shape": "round-tag", "background-color": "#2a9d8f", "color": "#1d5f57" } },
    { selector: "node.centre", style: { "width": 22, "height": 22, "border-width": 3, "border-color": "#1d2330", "font-weight": "bold" } },
    { selector: "node.hit", style: { "width": 20, "height": 20, "background-color": "#2f6fdf", "font-weight": "bold", "text-halign": "center", "text-valign": "bottom", "text-margin-x": 0, "text-margin-y": 3 } },
    { selector: "node.via", style: { "background-color": "#b7c7e6", "text-halign": "center", "text-valign": "bottom", "text-margin-x": 0, "text-margin-y": 3 } },
    { selector: "node.ch-added", style: { "border-width": 4, "border-color": "#1f9d55" } },
    { selector: "node.ch-changed, node.ch-restored", style: { "border-width": 4, "border-color": "#e08a00" } },
    { selector: "node.ch-superseded, node.ch-archived", style: { "border-width": 4, "border-color": "#d64545" } },
    { selector: "node:selected", style: { "border-width": 4, "border-color": "#111", "border-style": "solid" } },
    { selector: "edge", style: {
      "width": 1.5, "line-color": "#9fb3d9", "curve-style": "unbundled-bezier", "control-point-distances": "data(bend)",
      "control-point-weights": 0.5, "target-arrow-shape": "triangle", "target-arrow-color": "#9fb3d9", "arrow-scale": 0.7,
    } },
    { selector: "edge.CONTRADICTS", style: { "line-color": "#d64545", "target-arrow-color": "#d64545" } },
    { selector: "edge.next", style: { "curve-style": "straight", "line-style": "dashed", "line-color": "#cfd5df", "target-arrow-color": "#cfd5df", "width": 1 } },
    { selector: "edge.mention", style: { "curve-style": "straight", "line-color": "#c9b3e8", "target-arrow-shape": "none", "width": "data(width)", "opacity": 0.55 } },
    { selector: "edge.path, edge.link", style: { "curve-style": "bezier", "label": "data(label)", "font-size": 10, "color": "#5d6677", "text-rotation": "autorotate", "text-background-color": "#ffffff", "text-background-opacity": 0.85 } },
    { selector: "edge.path", style: { "width": 3, "line-color": "#2f6fdf", "target-arrow-color": "#2f6fdf" } },
    { selector: "edge.ch-added", style: { "line-color": "#1f9d55", "target-arrow-color": "#1f9d55", "width": 3 } },
    { selector: "edge.ch-ended", style: { "line-color": "#d64545", "target-arrow-color": "#d64545", "line-style": "dashed", "width": 2 } },
  ];

  /** Draws the elements: placed by `layout`, or where they carry a position ("preset"). When the same nodes are
      drawn again (another moment, a note written), the view stays where the reader left it. */
  function draw(elements, layout, message) {
    const graph = $("graph");
    graph.dataset.ready = "0";
    const before = new Set(cy ? cy.nodes().map((n) => n.id()) : []);
    const nodes = elements.filter((e) => e.group === "nodes");
    const same = cy && nodes.length > 0 && nodes.length === before.size && nodes.every((n) => before.has(n.data.id));
    const viewport = same ? { zoom: cy.zoom(), pan: { ...cy.pan() } } : null;
    if (cy) cy.destroy();
    performance.mark("amem-draw");
    // "preset": no layout at construction (the default would lay everything out on a grid first).
    // The wheel zooms at Cytoscape's own pace: a custom sensitivity makes it warn on every draw.
    cy = cytoscape({ container: graph, elements, style: STYLE, layout: { name: "preset" }, minZoom: 0.1, maxZoom: 4 });
    cy.on("tap", "node", (event) => tapped(event.target.data()));
    performance.mark("amem-layout-start");
    cy.one("layoutstop", () => {
      performance.mark("amem-layout-stop");
      if (viewport) cy.viewport(viewport);
      else readable(graph);
      if (state.note) cy.getElementById(state.note).select();
      graph.dataset.nodes = String(cy.nodes().length);
      graph.dataset.ready = "1";
      firstDrawn();
    });
    cy.layout(layout).run();
    status(message);
    window.amemViewer.cy = cy;
  }

  /** The whole graph in view where its labels stay readable; else readable, from its top left (the rest a drag
      away). */
  function readable(graph) {
    cy.fit(undefined, 30);
    if (cy.zoom() > 1.4) cy.zoom({ level: 1.4, renderedPosition: { x: graph.clientWidth / 2, y: graph.clientHeight / 2 } });
    if (cy.zoom() >= READABLE) return;
    const box = cy.elements().boundingBox();
    cy.zoom(READABLE);
    cy.pan({ x: 20 - box.x1 * READABLE, y: 20 - box.y1 * READABLE });
  }

  function tapped(data) {
    if (data.kind === "note") showNote(data.id);
    else if (data.kind === "entity") showEntity(data.name);
    else if (data.kind === "step") openStep(data.step);
  }

  const noteNode = (note, classes, extra = {}) => ({
    group: "nodes", classes,
    data: { id: note.id, kind: "note", label: short(note.content, 40), ...extra },
  });

  // -- the memory along its time ----------------------------------------------------------------------------------
  // Every graph but a search's is drawn the same way: what happened (steps of the memory, or notes) down a column
  // in the order it happened, labelled on its right; the entities and topics between them in two columns further
  // right, each at the height of what mentions it; links between notes as arcs on the left. Positions are
  // computed, not simulated: no label lies over another, and the same memory is drawn the same way each time.
  const ROW = 30;
  const HUB_ROW = 28;
  const HUB_X = [330, 560];
  const DAY = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
  const day = (iso) => DAY.format(new Date(iso));
  const plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;

  /** Places `column` (nodes in time order, `gap` before a new session) and `hubs` (nodes with the ids of the
      column's nodes they join). */
  function alongTime(column, hubs) {
    const at = new Map();
    let y = 0;
    column.forEach((item, i) => {
      if (i && item.gap) y += ROW / 2;
      item.node.position = { x: 0, y };
      at.set(item.node.data.id, y);
      y += ROW;
    });
    const bottom = Math.max(0, y - ROW);
    const wanted = hubs.map((hub) => {
      const ys = hub.joins.map((id) => at.get(id)).filter((v) => v !== undefined);
      return { hub, y: ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : 0 };
    }).sort((a, b) => a.y - b.y);
    [0, 1].forEach((c) => {
      const mine = wanted.filter((_, i) => i % 2 === c);
      let limit = Math.max(bottom, (mine.length - 1) * HUB_ROW);  // upwards: within the column's height
      for (let i = mine.length - 1; i >= 0; i--) { mine[i].y = Math.min(mine[i].y, limit); limit = mine[i].y - HUB_ROW; }
      let floor = 0;  // downwards: a row apart
      for (const w of mine) { w.y = Math.max(w.y, floor); floor = w.y + HUB_ROW; w.hub.node.position = { x: HUB_X[c], y: w.y }; }
    });
  }

  const hubNode = (entity, count) => ({ group: "nodes", classes: "entity" + (entity.kind === "topic" ? " topic" : ""),
    data: { id: "e:" + entity.key, kind: "entity", name: entity.name, label: entity.name, size: Math.min(24, 10 + 2 * Math.sqrt(count)) } });
  const mentionEdge = (from, hub, count) => ({ group: "edges", classes: "mention",
    data: { id: `m:${from}>${hub}`, source: from, target: hub, width: Math.min(5, 0.8 + count / 2), bend: 0 } });

  function stepLabel(step) {
    const dates = day(step.first) === day(step.last) ? day(step.first) : `${day(step.first)} – ${day(step.last)}`;
    const name = step.kind === "group" ? plural(step.steps, "step") : step.label;
    return `${name} · ${dates} (${step.notes})`;
  }

  /** The map: the memory's steps in time order and the hubs between them. */
  function mapElements(data) {
    const els = [], column = [], hubs = [];
    const most = Math.max(1, ...data.steps.map((s) => s.notes));
    data.steps.forEach((step, i) => {
      const node = { group: "nodes", classes: "step " + step.kind,
        data: { id: "s:" + step.key, kind: "step", step, label: stepLabel(step), size: 10 + 30 * Math.sqrt(step.notes / most) } };
      els.push(node);
      column.push({ node });
      if (i) els.push({ group: "edges", classes: "next", data: { id: `n:${i}`, source: "s:" + data.steps[i - 1].key, target: node.data.id, bend: 0 } });
    });
    for (const hub of data.hubs) {
      const node = hubNode(hub.entity, hub.steps.length);
      els.push(node);
      hubs.push({ node, joins: hub.steps.map(([key]) => "s:" + key) });
      for (const [key, n] of hub.steps) els.push(mentionEdge("s:" + key, node.data.id, n));
    }
    alongTime(column, hubs);
    return els;
  }

  const time = (note) => Date.parse(note.event_time || note.created_at);
  const inTime = (a, b) => time(a.note) - time(b.note) || (a.note.seq ?? 0) - (b.note.seq ?? 0)
    || Date.parse(a.note.created_at) - Date.parse(b.note.created_at);
  const stepOf = (note) => (note.session ? "session:" + note.session : "day:" + new Date(time(note)).toISOString().slice(0, 10));

  /** Notes in the order they happened, a heading where a session (or day) begins, the entities two or more of
      them mention as hubs (not one that nearly all mention), links as arcs. */
  function noteElements(data) {
    const notes = [...data.notes].sort(inTime);
    const els = [], column = [], hubs = [];
    let last = null;
    for (const item of notes) {
      const note = item.note;
      const key = stepOf(note);
      if (key !== last) {
        const node = { group: "nodes", classes: "header", data: { id: `h:${key}:${column.length}`, kind: "header",
          label: `${note.session ? note.session : "no session"} · ${day(note.event_time || note.created_at)}` } };
        els.push(node);
        column.push({ node, gap: last !== null });
        last = key;
      }
      const node = noteNode(note, [item.state, item.change ? "ch-" + item.change : "", item.hops === 0 ? "centre" : ""].join(" "));
      els.push(node);
      column.push({ node });
    }
    const y = new Map(column.map((c, i) => [c.node.data.id, i]));
    for (const link of data.links) {
      const span = Math.abs((y.get(link.target_id) ?? 0) - (y.get(link.source_id) ?? 0));
      const down = (y.get(link.target_id) ?? 0) > (y.get(link.source_id) ?? 0);
      els.push({ group: "edges", classes: [link.type, link.change ? "ch-" + link.change : ""].join(" "),
        data: { id: `l:${link.source_id}>${link.target_id}:${link.type}`, source: link.source_id, target: link.target_id,
          kind: "link", bend: (down ? 1 : -1) * Math.min(30 + span * 6, 150) } });
    }
    for (const [a, b] of data.session_steps) {
      els.push({ group: "edges", classes: "next", data: { id: `n:${a}>${b}`, source: a, target: b, kind: "next", bend: 0 } });
    }
    const byEntity = new Map();
    for (const [noteId, key] of data.mentions) {
      const entry = byEntity.get(key) || { entity: data.entities[key], notes: [] };
      entry.notes.push(noteId);
      byEntity.set(key, entry);
    }
    const everywhere = notes.length >= 10 ? notes.length * 0.8 : Infinity;
    const shown = [...byEntity.values()].filter((e) => e.notes.length >= 2 && e.notes.length <= everywhere)
      .sort((a, b) => b.notes.length - a.notes.length).slice(0, 16);
    for (const { entity, notes: ids } of shown) {
      const node = hubNode(entity, ids.length);
      els.push(node);
      hubs.push({ node, joins: ids });
      for (const id of ids) els.push(mentionEdge(id, node.data.id, 1));
    }
    alongTime(column, hubs);
    return els;
  }

  /** A ticket for a graph about to be drawn: an answer that comes back after a newer ticket was taken is dropped,
      so a slower, older request never draws over a newer one. */
  const ticket = () => ++state.drawn;
  const stale = (mine) => mine !== state.drawn;

  /** Down one level: a group of steps to its steps, a step to its notes, a note to its neighbourhood. */
  function go(view) {
    state.trail.push(state.view);
    state.view = view;
    claim({ kind: "notes" });
    showNetwork();
  }

  function openStep(step) {
    if (step.kind === "group") go({ kind: "span", first: step.span[0], last: step.span[1], label: stepLabel(step) });
    else go({ kind: "step", key: step.key, label: `${step.label} · ${day(step.first)}` });
  }

  const VIEW_NAMES = { overview: () => "The memory along its time", around: () => "A note's neighbourhood" };
  function crumbs() {
    const views = [...state.trail, state.view];
    $("crumbs").replaceChildren(...views.flatMap((view, i) => {
      const name = VIEW_NAMES[view.kind] ? VIEW_NAMES[view.kind]() : view.label;
      const last = i === views.length - 1;
      return [i ? " › " : null, last ? el("strong", null, name) : el("button", { type: "button", class: "crumb", on: { click: () => back(i) } }, name)];
    }).filter(Boolean));
  }

  function back(i) {
    state.view = state.trail[i];
    state.trail = state.trail.slice(0, i);
    claim({ kind: "notes" });
    showNetwork();
  }

  async function showNetwork() {
    $("graph").dataset.ready = "0";
    status("Loading the network…");
    const view = state.view;
    if (view.kind === "search") return runSearch(view.q);
    crumbs();
    const mine = ticket();
    const asked = view.kind === "around" ? { around: view.id, hops: view.hops || 1 }
      : view.kind === "step" ? { ...state.filters, step: view.key }
      : view.kind === "span" ? { ...state.filters, first: view.first, last: view.last } : state.filters;
    try {
      const data = await api("network", { ...asked, ...moment() });
      if (stale(mine)) return;
      if (data.kind === "map") {
        draw(mapElements(data), { name: "preset", fit: false }, mapMessage(data));
        if (state.panel.kind === "notes" && state.tab === "network") listSteps(data, claim({ kind: "notes" }));
        return;
      }
      const shown = data.notes.length;
      const what = view.kind === "around" ? `A note's neighbourhood: ${plural(shown, "note")} within ${plural(view.hops || 1, "step")}`
        : view.kind === "step" ? `${view.label}: ${plural(shown, "note")}` : shown ? `${plural(shown, "note")}` : "No note matches";
      draw(noteElements(data), { name: "preset", fit: false },
        what + (shown ? ", in the order they happened" : "") + (data.more ? " (the first; more lie beyond)" : "") + asOfText());
      if (state.panel.kind === "notes" && state.tab === "network") listNotes(data, claim({ kind: "notes" }));
    } catch (err) {
      if (stale(mine)) return;
      status(err.message, true);
      // A stretch of steps opened at another moment may not exist at this one: back to the overview.
      if (view.kind === "span" && state.trail.length) back(0);
    } finally {
      firstDrawn();  // an answer came (drawn, failed or overtaken): the slider may read the memory's times now
    }
  }

  function mapMessage(data) {
    const groups = data.steps.filter((s) => s.kind === "group").length;
    return `${plural(data.notes, "note")} in ${plural(data.steps.length, groups ? "stretch" : "session or day", groups ? "stretches" : "sessions or days")}, ` +
      "in the order they happened, with the entities and topics between them: click one to open it" +
      (data.throughout.length ? ` · mentioned throughout: ${data.throughout.map((e) => e.name).join(", ")}` : "") + asOfText();
  }

  const asOfText = () => (state.asOf ? ` · as of ${when(state.asOf)}` : "") + (state.saidBefore ? ` · said before ${day(state.saidBefore)}` : "")
    + (state.since ? ` · changes since ${when(state.since)} marked` : "");

  function listSteps(data, fresh) {
    if (!fresh()) return;
    const box = details("Along its time (notes in each)");
    for (const step of data.steps) {
      put(box, el("div", { class: "item step-row", data: { step: step.key }, on: { click: () => openStep(step) } },
        el("span", { class: "text" }, stepLabel(step))));
    }
    if (data.throughout.length) put(box, el("p", { class: "meta" }, `Mentioned throughout (not drawn): ${data.throughout.map((e) => e.name).join(", ")}`));
  }

  function listNotes(data, fresh) {
    if (!fresh()) return;
    const box = details("Notes shown, in the order they happened");
    if (!data.notes.length) put(box, el("p", { class: "empty" }, "No note matches."));
    for (const item of [...data.notes].sort(inTime)) {
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
    go({ kind: "around", id, hops: 1 });
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
    state.trail = [{ kind: "overview" }];
    state.view = { kind: "search", q, label: `Search: “${short(q, 40)}”` };
    crumbs();
    const fresh = claim({ kind: "search" });
    $("graph").dataset.ready = "0";
    status("Searching…");
    const mine = ticket();
    try {
      const data = await api("search", { q, mode: $("mode").value, hops: $("hops").value, all: $("f-all").checked, as_of: state.asOf });
      if (!stale(mine) && fresh()) renderSearch(data);
    } catch (err) {
      if (!stale(mine)) status(err.message, true);
    } finally {
      firstDrawn();
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
          els.push({ group: "edges", classes: "path " + step.type, data: { id: `p:${hit.rank}:${i}`, source: step.from_id, target: to, label: step.type, kind: "path", bend: 0 } });
          joined.add(`${step.from_id}|${to}`).add(`${to}|${step.from_id}`);
        }
      });
    }
    for (const link of data.links || []) {
      if (joined.has(`${link.source}|${link.target}`)) continue;
      joined.add(`${link.source}|${link.target}`).add(`${link.target}|${link.source}`);
      els.push({ group: "edges", classes: "link " + link.type, data: { id: `l:${link.source}:${link.target}:${link.type}`, source: link.source, target: link.target, label: link.type, kind: "link", bend: 0 } });
    }
    // Hits in rank order, two to a row (the notes on their paths after them): a force layout would pile up the
    // unlinked seeds of a search, labels over labels.
    const SEARCH = { name: "grid", cols: 2, avoidOverlap: true, nodeDimensionsIncludeLabels: true, padding: 20,
      sort: (a, b) => (a.data("rank") ?? 1e9) - (b.data("rank") ?? 1e9) };
    draw(els, SEARCH, `${data.hits.length} hits for “${short(data.query, 60)}”` + asOfText());
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
      if (state.saidBefore) put(box, el("p", { class: "meta" }, "The entities as recorded now: said time moves the graph and the header's counts."));
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
    state.trail = [];
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
      if (state.view.kind === "search") { state.view = { kind: "overview" }; state.trail = []; }  // the network tab shows the network
      showNetwork();
    }
  }

  // -- time -----------------------------------------------------------------------------------------------------
  // The slider moves in steps over one of two times: as recorded (the moments the memory changed, gathered by
  // second, minute, ... as their number needs; the page reads the memory as of a step's end), or as said (a step per
  // session, else day, of what the conversation says; the page shows the notes said before the next step). Its last
  // step is now; every count on the page follows it.

  /** The slider's positions over `axis`, read from the server: false where that time has nothing to show. */
  async function loadSlider(axis, { keep = false } = {}) {
    const mine = ++state.sliderLoads;
    const data = await api("timeline", { axis });
    if (mine !== state.sliderLoads) return true;  // a later load (another axis, newer steps) decides
    if (axis === "said" && !data.steps.length) return false;
    const slider = $("as-of");
    const held = keep ? state.position : null;  // the moment shown before now, kept across new steps
    const before = data.first
      ? [{ label: "before the first write", at: new Date(Date.parse(data.first) - 1).toISOString(), notes: 0, entities: 0 }] : [];
    state.slider = data;
    state.positions = axis === "said" ? data.steps : [...before, ...data.steps];
    if (!state.positions.length) state.positions = [{ label: "now", at: null, notes: 0, entities: 0 }];
    const top = state.positions.length - 1;
    for (const id of ["as-of", "since"]) { $(id).min = "0"; $(id).max = String(top); }
    const kept = held ? state.positions.findLastIndex((p) => p.at && Date.parse(p.at) <= Date.parse(held.at)) : -1;
    slider.value = String(held ? Math.max(kept, 0) : top);
    slider.disabled = false;
    if (held) timeChanged();
    return true;
  }

  function timeChanged() {
    const positions = state.positions;
    if (!positions) return;
    const i = Number($("as-of").value);
    const last = i >= positions.length - 1;
    const here = positions[Math.min(i, positions.length - 1)];
    state.position = last ? null : here;
    if (state.axis === "said") {
      state.asOf = state.since = null;
      state.saidBefore = last ? null : positions[i + 1].at;
      $("as-of-label").textContent = `${here.label} · ${day(here.at)}${last ? " (the last)" : ""}`;
    } else {
      state.saidBefore = null;
      state.asOf = last ? null : here.at;
      $("as-of-label").textContent = last ? "now" : here.label;
    }
    const since = $("since");
    if (state.axis === "recorded" && $("compare").checked && i > 0) {
      const j = Math.min(Number(since.value), i - 1);
      since.value = String(j);
      state.since = positions[j].at;
      $("since-label").textContent = positions[j].label;
    } else {
      state.since = null;
      $("since-label").textContent = "";
    }
    if (state.summary) header(state.summary);
  }

  async function switchAxis() {
    const axis = $("axis").value;
    try {
      if (!await loadSlider(axis)) {
        status("No note says when it happened (no event time): the memory has only the time it was recorded.");
        $("axis").value = state.axis;
        return;
      }
    } catch (err) {
      status(err.message, true);
      $("axis").value = state.axis;
      return;
    }
    state.axis = axis;
    const said = axis === "said";
    if (said) $("compare").checked = false;
    $("compare").disabled = said;
    $("since").disabled = said || !$("compare").checked;
    redraw();
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
      ["topic", "topic"], ["added", "added since"], ["changed", "changed since"]];
    put($("legend"), el("h3", null, "Legend"), items.map(([cls, text]) => el("div", null, el("span", { class: "swatch " + cls }), text)),
      el("div", null, "down the graph: time · boxes: sessions (or days) · dashed: in order · arcs: links · red dashed: a link ended since"));
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
    const here = state.position;
    if (here) {  // the slider before now: what the memory held (or the conversation had said) by then
      $("counts").textContent = `${here.notes} of ${state.slider.notes} notes · ${plural(here.entities, "entity", "entities")} · ${state.axis} by then`;
      return;
    }
    const queue = summary.queue && summary.queue.pending
      ? ` · ${summary.queue.pending} waiting for the model's analysis (the oldest ${Math.round(summary.queue.lag_s)} s)` : "";
    $("counts").textContent = `${c.Note || 0} notes · ${c.Entity || 0} entities · ${c.Page || 0} pages · ${c.Segment || 0} segments · ${c.Fact || 0} facts${queue}`;
  }

  // The memory as an agent writes it: the counts follow every few seconds; while the page shows the memory as it is
  // now (the slider at its end, no note or search open), what was written is drawn too.
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
    const atNow = state.position === null;
    try {
      await loadSlider(state.axis, { keep: true });
    } catch (err) {
      return;
    }
    if (atNow && state.view.kind !== "search" && state.panel.kind === "notes" && state.tab === "network") showNetwork();
  }

  async function start() {
    window.amemViewer = { cy: null, state };
    if (new URLSearchParams(location.search).has("token")) history.replaceState(null, "", location.pathname);
    legend();
    const drawn = new Promise((resolve) => { firstDrawn = resolve; });
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
      await drawn;  // the slider reads the whole memory's times: after the first graph, not beside it
      await loadSlider("recorded");
      timeChanged();
    } catch (err) {  // the time controls need the slider's steps; the rest works without them
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
    $("now").addEventListener("click", () => { $("as-of").value = $("as-of").max; redraw(); });
    document.body.dataset.ready = "1";
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
