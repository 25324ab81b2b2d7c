"""Shops and usuals on a slow phone: the usuals and a shop's learned order computed by the web
client's own modules (replica-shops.js, shops.js) in Debian's Chromium, on a list of 10,000 items
with two years of check-offs (300 usuals bought every 3 to 14 days, the other items once or
twice), with the CPU as is and slowed 4× (Emulation.setCPUThrottlingRate). Prints a table
(docs/performance.md): the median of 21 runs of each, and the baseline of the same run and rate,
what the list screen does after every change of the list: every item read from its registers
(ListState.allItems).

    Scripts/bench.sh web-shops   (release basket-server; Playwright in .build/web-venv)
"""
import os
import socket
import subprocess
import tempfile
import time

from playwright.sync_api import sync_playwright

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BASKET_BUILD", os.path.join(ROOT, ".build", "release"))
CHROMIUM = os.environ.get("BASKET_CHROMIUM", "/usr/bin/chromium")

MEASURE = """async ({ base, items, days, runs }) => {
  const { ListState } = await import(base + "state.js");
  const shops = await import(base + "shops.js");
  const walk = await import(base + "replica-shops.js");
  const ids = await import(base + "ids.js");
  const clock = await import(base + "clock.js");
  const aisles = ["Fruit & vegetables", "Bakery", "Dairy & eggs", "Meat & fish", "Frozen", "Drinks", "Pantry", "Snacks",
    "Household", "Personal care", "Baby", "Pets"];
  // The same history as basket-bench shops draws, from a seeded generator of its own.
  let seed = 46n;
  const below = (n) => { seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n); return Number((seed >> 33n) % BigInt(n)); };
  const list = "0123456789abcdef0123456789abcdef";
  const state = new ListState(list);
  const now = Date.now();
  const start = now - days * 86400000;
  let counter = 0;
  const stamp = (ms) => clock.timestamp(ms, (counter = (counter + 1) % 65536));
  const replica = "0000000000000b0b";
  let checks = 0;
  for (let n = 0; n < items; n++) {
    const name = `Item ${n}`;
    const id = ids.itemID(list, name.toLowerCase());
    for (const [field, value] of [["name", name], ["category", aisles[n % aisles.length]], ["deleted", false]]) {
      state.merge({ list, item: id, field, value, ts: stamp(start), replica });
    }
    let at = start + below(7 * 86400000);
    const usual = n < 300;
    const every = (3 + below(12)) * 86400000;
    let times = usual ? Infinity : 1 + below(2);
    const ops = [];
    while (times > 0 && at < now) {
      ops.push({ list, item: id, field: "checked", value: true, ts: stamp(at), replica });
      checks += 1;
      at += usual ? every + below(86400000) : below(days * 43200000);
      times -= 1;
    }
    for (const op of ops) state.merge(op);
    state.noteChecks(ops);
  }
  const shop = { id: ids.shopID(list, "lidl"), name: "Lidl", removed: false, order: aisles, pinned: ["Bakery"], learned: null };
  const trip = Array.from({ length: 40 }, (_, i) => aisles[(i * 5) % aisles.length]);
  for (let n = 0; n < 10; n++) shop.learned = shops.learn([...trip].sort(() => below(3) - 1), aisles, ["Bakery"], shop.learned, now + n);
  const fake = { state: () => state };
  // performance.now() is coarse in a page: a quick computation is timed over many rounds.
  const time = (body, rounds = 1) => { const t = performance.now(); for (let i = 0; i < rounds; i++) body(); return (performance.now() - t) / rounds; };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const samples = { baseline: [], usuals: [], order: [], learn: [] };
  let found = 0;
  for (let r = 0; r < runs; r++) {
    samples.baseline.push(time(() => state.allItems()));
    samples.usuals.push(time(() => { found = walk.usualsOf(fake, list).length; }));
    samples.order.push(time(() => walk.walkOrder(shop, []), 200));
    samples.learn.push(time(() => shops.learn(trip, aisles, ["Bakery"], shop.learned, now), 200));
  }
  return { checks, found, medians: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) };
}"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    work = tempfile.mkdtemp(prefix="basket-bench-shops-")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([os.path.join(BUILD, "basket-server"), "--listen", f"127.0.0.1:{port}", "--data",
                               os.path.join(work, "data"), "--web", os.path.join(ROOT, "Client", "web")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=dict(os.environ, BASKET_QUIET="1"))
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            context = browser.new_context(viewport={"width": 390, "height": 844})
            page = context.new_page()
            page.goto(url + "/")
            page.wait_for_selector("html[data-ready=true]")
            cdp = context.new_cdp_session(page)
            base = f"{url}/a/{page.get_attribute('meta[name=basket-version]', 'content')}/"
            results = {}
            for rate in (1, 4):
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
                results[rate] = page.evaluate(MEASURE, {"base": base, "items": 10000, "days": 730, "runs": 21})
            browser.close()
    finally:
        server.terminate()
        server.wait()
    one = results[1]
    print(f"\n## Shops and usuals on the phone: 10000 items, {one['checks']} check-offs over 730 days, "
          f"{one['found']} usuals (median of 21)\n")
    print("what | CPU 1× | CPU 4× | 4× over 1× | × reading the items (4×)")
    print("-----|--------|--------|------------|-------------------------")
    names = {"baseline": "baseline: read every item (allItems)", "usuals": "usuals", "order": "a shop's order with what trips taught",
             "learn": "learn from a trip of 40 check-offs"}
    for key, label in names.items():
        a, b = results[1]["medians"][key], results[4]["medians"][key]
        print(f"{label} | {a:.3f} ms | {b:.3f} ms | {b / a if a else 0:.1f} | {b / results[4]['medians']['baseline']:.3f}")


if __name__ == "__main__":
    main()
