// Checks Tests/Vectors/conformance-v1.json against the web client's modules, in the browser.
// tests.py evaluates this function in the page with the vectors and the address of the modules;
// it returns how many cases of each kind were checked and every failure.
async ({ vectors, base }) => {
  const key = await import(base + "key.js");
  const ids = await import(base + "ids.js");
  const clock = await import(base + "clock.js");
  const ops = await import(base + "ops.js");
  const state = await import(base + "state.js");
  const search = await import(base + "search.js");
  const searchIndex = await import(base + "search-index.js");
  const query = await import(base + "query.js");
  const entry = await import(base + "entry.js");
  const replicaModule = await import(base + "replica.js");
  const phrases = await import(base + "phrases.js");
  const catalogueModule = await import(base + "catalogue.js");
  const fieldModule = await import(base + "field.js");
  const api = await import(base + "api.js");
  const failures = [];
  const checked = {};
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const fail = (kind, about, expected, got) => {
    if (failures.length < 40) failures.push({ kind, about, expected, got });
  };
  const count = (kind) => (checked[kind] = (checked[kind] ?? 0) + 1);
  // An item as the vectors write it: its id and every item field of the web client's table.
  const itemFields = (i) => Object.fromEntries([["id", i.id], ...fieldModule.ITEM_FIELDS.map((f) => [f, i[f]])].sort(([a], [b]) => (a < b ? -1 : 1)));
  /** A ListState as the vectors write a state: title, aisles, archived, every named item by id. */
  const stateOf = (list) => {
    const info = list.info;
    const items = list.allItems().sort((a, b) => (a.id < b.id ? -1 : 1)).map(itemFields);
    return { title: info.title, aisles: info.aisles, archived: info.archived, items };
  };
  const expectedState = (s) => ({ title: s.title, aisles: s.aisles, archived: s.archived, items: s.items.map(itemFields) });

  // The table of registers: the same names, codes, owners, kinds and limits as BasketCore's Field.
  {
    count("fields");
    const table = fieldModule.FIELD_TABLE.map((f, code) => ({ code, kind: f.kind, list: f.list, maxBytes: f.maxBytes, name: f.name, settable: f.settable, target: f.target }));
    if (!same(table, vectors.fields)) fail("fields", "the table of registers", vectors.fields, table);
  }

  // The API's errors: the same names, codes and statuses as BasketCore's Wire.ErrorCode.
  {
    count("errors");
    const table = Object.entries(api.ERRORS).map(([name, e]) => ({ code: e.code, name, status: e.status }));
    if (!same(table, vectors.errors)) fail("errors", "the table of the API's errors", vectors.errors, table);
  }

  // The API's routes: the same names, methods and patterns as BasketCore's Wire.Route.
  {
    count("routes");
    const table = Object.entries(api.ROUTES).map(([name, r]) => ({ method: r.method, name, pattern: r.pattern }));
    if (!same(table, vectors.routes)) fail("routes", "the table of the API's routes", vectors.routes, table);
  }

  for (const c of vectors.keys) {
    count("keys");
    const k = key.normalize(c.name);
    if (k !== c.key) fail("key", c.name, c.key, k);
    const id = ids.itemID(vectors.list, c.key);
    if (id !== c.id) fail("id", c.key, c.id, id);
  }

  for (const c of vectors.invalidOps) {
    count("invalidOps");
    try {
      ops.decode(c.ops);
      fail("invalidOps", c.about, `refused at line ${c.line}`, "accepted");
    } catch (error) {
      if (!(error instanceof ops.DecodeError) || error.line !== c.line) fail("invalidOps", c.about, c.line, String(error));
    }
  }

  for (const c of vectors.merges) {
    const decoded = ops.decode(c.ops);
    if (ops.encode(decoded, true) !== c.ops) fail("encode", c.about, c.ops, ops.encode(decoded, true));
    for (const order of c.orders) {
      count("mergeOrders");
      const list = new state.ListState(decoded[0].list);
      for (const index of order) list.merge(decoded[index]);
      const got = stateOf(list);
      const expected = expectedState(c.state);
      if (!same(got, expected)) fail("merge", `${c.about} order ${order.join(",")}`, expected, got);
    }
  }

  for (const c of vectors.clocks.now) {
    count("clockNow");
    const next = clock.next(c.last, c.wall);
    if (next !== c.next) fail("clockNow", c, c.next, next);
  }
  for (const c of vectors.clocks.receive) {
    count("clockReceive");
    try {
      const after = clock.receive(c.last, c.remote, c.wall);
      if (after !== c.after) fail("clockReceive", c, c.after, after);
    } catch (error) {
      if (c.after !== null || error.offset !== c.offset) fail("clockReceive", c, c, String(error));
    }
  }
  const parseValue = (v) => (v === "-" ? null : v === "t" ? true : v === "f" ? false : v.slice(1));
  for (const c of vectors.clocks.order) {
    count("order");
    const a = { ts: c.a[0], replica: c.a[1], value: parseValue(c.a[2]) };
    const b = { ts: c.b[0], replica: c.b[1], value: parseValue(c.b[2]) };
    const winner = state.beats(b, a) ? "b" : "a";
    if (winner !== c.winner) fail("order", c, c.winner, winner);
  }

  const sets = {};
  for (const [name, items] of Object.entries(vectors.searchSets)) {
    const lastUsed = new Map();
    const list = items.map((i) => {
      const id = ids.itemID(vectors.list, key.normalize(i.name));
      if (i.lastUsed !== undefined) lastUsed.set(id, i.lastUsed);
      return { id, name: i.name, checked: i.checked, category: i.category ?? null };
    });
    sets[name] = new searchIndex.Index(list, lastUsed);
  }
  for (const c of vectors.searches) {
    count("searches");
    // Typed on, as a person types it: every beginning of the query first, on the same index (the
    // index looks again only at the entries the last query kept, and must rank as if it had not).
    const letters = [...c.query];
    for (let n = 1; n < letters.length; n++) sets[c.set].search(new query.Query(letters.slice(0, n).join("")), c.limit ?? Infinity);
    const result = sets[c.set].search(new query.Query(c.query), c.limit ?? Infinity);
    const enter = search.enterAction(result);
    const got = {
      offer: result.offer,
      results: result.matches.map((m) => ({ exact: m.exact, name: m.item.name, tier: m.tier })),
      enter: enter === null ? null : "existing" in enter ? "existing:" + enter.existing.name : "add:" + enter.add,
      didYouMean: search.didYouMean(result)?.name ?? null,
    };
    const expected = {
      offer: c.offer,
      results: c.results.map((h) => ({ exact: h.exact, name: h.name, tier: h.tier })),
      enter: c.enter,
      didYouMean: c.didYouMean,
    };
    if (!same(got, expected)) fail("search", `${c.set}: ${c.query}`, expected, got);
  }

  for (const c of vectors.entries) {
    count("entries");
    const keys = new Set(c.existing.map((n) => key.normalize(n)));
    const got = entry
      .resolveSpellings(entry.parseAll(c.text, keys), c.existing)
      // In the file's key order, sorted (the category and note only where one was typed).
      .map((e) => ({
        ...(e.category === null ? {} : { category: e.category }),
        name: e.name,
        ...(e.note === null ? {} : { note: e.note }),
        quantity: e.quantity,
        typed: e.typed,
      }));
    if (!same(got, c.entries)) fail("entry", c.text, c.entries, got);
  }
  // The catalogue: the same files the CLI embeds, the same suggestions, aisles and icons. A
  // language the catalogue lacks is looked up as English, as the Swift does.
  for (const c of vectors.catalogue) {
    count("catalogue");
    const loaded = [];
    for (const language of [...c.languages, "en"]) {
      if (catalogueModule.LANGUAGES.includes(language)) loaded.push(await catalogueModule.load(language, base));
    }
    const own = catalogueModule.LANGUAGES.includes(c.languages[0]) ? loaded[0] : null;
    const grocery = catalogueModule.grocery(loaded, c.query);
    const got = {
      suggestions: own === null ? [] : catalogueModule.suggestions(own, c.query, new Set(), 5),
      aisle: grocery?.aisle ?? null,
      icon: grocery?.icon ?? null,
    };
    const expected = { suggestions: c.suggestions, aisle: c.aisle, icon: c.icon };
    if (!same(got, expected)) fail("catalogue", `${c.languages.join(",")}: ${c.query}`, expected, got);
  }

  // What is offered beside adding what was typed: the same offers in the same order.
  const offersModule = await import(base + "offers.js");
  const searchModule = await import(base + "search.js");
  for (const c of vectors.offers) {
    count("offers");
    const own = await catalogueModule.load(c.language, base);
    const item = (/** @type {string} */ name) => ({ id: key.normalize(name), name, checked: false, category: null });
    const result = searchModule.search(c.query, c.list.map(item));
    const meant = searchModule.didYouMean(result) === null ? null : result.matches[0];
    const excluding = new Set([...c.list, ...c.removed, c.query].map((n) => key.normalize(n)));
    const got = offersModule.ranked(meant, offersModule.before(c.removed.map(item), c.query), catalogueModule.suggestionMatches(own, c.query, excluding, 3), offersModule.LIMIT, offersModule.due(c.due.map(item), c.query));
    if (!same(got, c.offers)) fail("offers", `${c.language}: ${c.query}`, c.offers, got);
  }

  // What other devices did, and a write of this device another's replaced: the same words.
  for (const c of vectors.news) {
    count("news");
    const got = phrases.newsPhrases(c.entries);
    if (JSON.stringify(got) !== JSON.stringify(c.lines)) fail("news", JSON.stringify(c.entries), c.lines, got);
  }
  for (const c of vectors.lostWrites) {
    count("lostWrites");
    const got = phrases.lostWrite(c.who, c.name, c.field, c.mine, c.theirs);
    if (got !== c.line) fail("lostWrites", `${c.field} ${JSON.stringify(c.mine)} → ${JSON.stringify(c.theirs)}`, c.line, got);
  }

  // Shops and usuals: the same ids, marks, places, learned orders and usuals (shops.js).
  const shops = await import(base + "shops.js");
  for (const c of vectors.shopIDs) {
    count("shopIDs");
    const id = ids.shopID(vectors.list, c.key);
    if (id !== c.id) fail("shopIDs", c.key, c.id, id);
  }
  for (const c of vectors.shopMarks) {
    count("shopMarks");
    const marks = shops.parseMarks(c.stored);
    const places = shops.parsePlaces(c.places);
    const got = { ids: marks, formatted: shops.formatMarks(marks), parsedPlaces: Object.fromEntries([...places].sort()), formattedPlaces: shops.formatPlaces(places) };
    const want = { ids: c.ids, formatted: c.formatted ?? null, parsedPlaces: Object.fromEntries(Object.entries(c.parsedPlaces).sort()), formattedPlaces: c.formattedPlaces ?? null };
    if (!same(got, want)) fail("shopMarks", JSON.stringify([c.stored, c.places]), want, got);
  }
  for (const c of vectors.shopOrders) {
    count("shopOrders");
    let learned = shops.parseLearned(c.learned ?? null);
    const after = [];
    const orders = [];
    c.trips.forEach((/** @type {string[]} */ trip, /** @type {number} */ n) => {
      const next = shops.learn(trip, c.base, c.pinned, learned, c.start + n * 86400000);
      after.push(shops.learnedText(next));
      learned = shops.parseLearned(shops.learnedText(next));
      orders.push(shops.shopOrder(c.base, c.pinned, learned));
    });
    if (!same({ after, orders }, { after: c.after, orders: c.orders })) fail("shopOrders", c.about, { after: c.after, orders: c.orders }, { after, orders });
  }
  for (const c of vectors.usuals) {
    count("usuals");
    const p = shops.usualPattern(c.checks, shops.dismissedAt(c.dismissed ?? null));
    const got = p === null ? null : [p.purchases, p.interval, p.last, p.due];
    if (!same(got, c.pattern ?? null)) fail("usuals", JSON.stringify(c.checks), c.pattern ?? null, got);
  }

  for (const c of vectors.usualIntervals) {
    count("usualIntervals");
    const got = phrases.every(c.interval);
    if (got !== c.phrase) fail("usualIntervals", String(c.interval), c.phrase, got);
  }

  // Amounts added to an item's: the same sums.
  const quantity = await import(base + "quantity.js");
  for (const c of vectors.quantitySums) {
    count("quantitySums");
    const got = quantity.adding(c.added, c.existing);
    if (got !== c.result) fail("quantitySums", `${c.existing} + ${c.added}`, c.result, got);
  }

  // The language a list's aisles are named in, from its categories.
  for (const c of vectors.aisleLanguages) {
    count("aisleLanguages");
    const got = catalogueModule.languageOfAisles(c.categories);
    if (got !== c.language) fail("aisleLanguages", c.categories.join(", "), c.language, got);
  }

  // A list as text to copy or share: the same text.
  const listText = await import(base + "list-text.js");
  for (const c of vectors.listTexts) {
    count("listTexts");
    const items = c.items.map((/** @type {any} */ i) => ({ ...i, quantity: i.quantity ?? null, note: i.note ?? null, category: i.category ?? null }));
    const got = listText.render(c.title, items, c.aisles, c.format);
    if (got !== c.text) fail("listTexts", `${c.title} (${c.format})`, c.text, got);
  }

  // Aisles typed after an item: the same aisle meant.
  for (const c of vectors.aisleNames) {
    count("aisleNames");
    const got = catalogueModule.aisleNamed(c.typed, c.language, c.known);
    if (got !== c.aisle) fail("aisleNames", `${c.language}: ${c.typed}`, c.aisle, got);
  }

  // Local writes: the same commands, at the same wall-clock readings, under the same replica id,
  // must write the same operations, say the same and leave the same outbox.
  const written = (op) => [op.item === "-" ? "0".repeat(32) : op.item, op.field, op.ts, op.replica, op.value === null ? "-" : op.value === true ? "t" : op.value === false ? "f" : "=" + op.value];
  const canonical = (v) => JSON.stringify(v, (k, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
  const sortRows = (rows) => rows.map((r) => r.join("\t")).sort().map((r) => r.split("\t"));
  for (const c of vectors.localWrites) {
    // IndexedDB's part the rules read back: every write seen per item (a discard rebuilds from it).
    /** @type {Map<string, any>} */
    const seen = new Map();
    const k = (/** @type {any} */ w) => [w.list, w.item, w.field, w.ts, w.replica].join("\u0000");
    const memory = {
      write: async (/** @type {any} */ { history = [], historyRemove = [] }) => {
        for (const w of history) seen.set(k(w), { list: w.list, item: w.item, field: w.field, ts: w.ts, replica: w.replica, value: w.value });
        for (const w of historyRemove) seen.delete(k(w));
      },
      history: async (/** @type {string} */ l, /** @type {string} */ item) => [...seen.values()].filter((w) => w.list === l && w.item === item),
      clear: async () => seen.clear(),
    };
    const r = new replicaModule.Replica(memory);
    r.meta = { clock: clock.ZERO };
    r.sessionReplica = c.replica;
    let wall = c.setupWall;
    r.now = () => wall;
    const list = vectors.list;
    await r.merge(list, ops.decode(c.setup), {});
    const idOf = (name) => ids.itemID(list, key.normalize(name));
    for (const [index, step] of c.steps.entries()) {
      count("localWrites");
      wall = step.wall;
      const before = new Set([...(r.outbox.get(list)?.keys() ?? [])]);
      const got = {};
      try {
        switch (step.action) {
          case "add": {
            const results = await r.add(list, step.entries);
            got.outcomes = results.map((x) => ({ outcome: x.outcome, quantityChanged: x.quantityChanged }));
            got.phrases = phrases.addPhrases(results);
            break;
          }
          case "check":
            await r.check(list, idOf(step.item));
            break;
          case "uncheck":
            await r.uncheck(list, idOf(step.item));
            break;
          case "remove":
            await r.remove(list, idOf(step.item));
            break;
          case "set":
            await r.set(list, idOf(step.item), step.field, step.value ?? null);
            break;
          case "rename":
            await r.rename(list, idOf(step.item), step.value);
            break;
          case "undo":
            await r.undo(list);
            break;
          case "aisles":
            await r.setAisles(list, step.aisles);
            break;
          case "archive":
            await r.setArchived(list, step.archived);
            break;
          case "correctClock":
            got.restamped = await r.correctClock(step.serverTime);
            break;
          case "restamp":
            got.restamped = await r.restampPending(list, false);
            break;
          case "discard":
            got.discarded = (await r.discardPending(list)).length;
            break;
          default:
            throw new Error(`unknown action ${step.action}`);
        }
      } catch (error) {
        got.error = error?.code ?? String(error);
      }
      const pending = [...(r.outbox.get(list)?.entries() ?? [])];
      got.writes = pending.filter(([identity]) => !before.has(identity)).map(([, op]) => written(op));
      got.changes = r.pendingChanges(list);
      if (step.pending) got.pending = sortRows(pending.map(([, op]) => written(op)));
      const expected = { writes: step.writes, changes: step.changes };
      for (const k of ["outcomes", "phrases", "error", "restamped", "discarded", "pending"]) if (step[k] !== undefined) expected[k] = k === "pending" ? sortRows(step[k]) : step[k];
      for (const k of Object.keys(got)) if (!(k in expected)) expected[k] = undefined;
      if (canonical(got) !== canonical(expected)) fail("localWrites", `${c.about}: step ${index + 1} (${step.action} ${step.item ?? ""})`, expected, got);
    }
    const got = stateOf(r.state(list));
    if (!same(got, expectedState(c.state))) fail("localWritesState", c.about, expectedState(c.state), got);
  }
  return { checked, failures };
}
