"""The web client on a slow phone: a list of 2,000 items in Debian's Chromium at 390×844, with
the CPU as is and slowed 4× (Chrome DevTools Protocol, Emulation.setCPUThrottlingRate: a
mid-range phone). Prints a table (docs/performance.md):

- keystroke → filtered list: from a key's keydown to the presentation of the frame after the
  input event that filtered the list;
- tap → checked: from a tap's click to the presentation of the frame after the click handler;
- tap → row drawn checked: from the click to the frame after the one that drew the row checked
  (the replica stores a write in IndexedDB before it applies it in memory and the row is drawn,
  so that a reload never loses what was shown: the commit's wait is in this measure; the push
  to the server follows);
- first visit: every byte a first visit moves over the wire (gzip as the server sends it), the
  page, its modules and what the service worker keeps for offline use.

Keystrokes and taps are timed by the browser itself, with the Event Timing API as Chrome's
Interaction to Next Paint is: an event's startTime plus its duration, which ends when the next
frame is presented, in 8 ms steps. The older measure, to a task queued after the next animation
frame, is printed under the table for comparison: it also counts whatever work was queued
before that task.

The 1× rows are the baseline measured in the same run; the ratio column is 4× over 1×. Under
each action, the same screen without the app (the page's rows and style sheet as a static page,
whose keystrokes hide the rows that do not match and whose taps toggle a row's class), at 1× and
4×: what the browser and this machine cost that day with next to no script, and the app's p95
over it. Each rate loads the app three times (47 keystrokes and 30 taps each), each load followed
by one of the static screen, and reports every sample of the three together: the machine is
shared, and one slow second moves the p95 of a single load's 47 keystrokes by a fifth.

    Scripts/bench.sh web        (release basket-server and basket; Playwright in .build/web-venv)
    BASKET_BENCH_WEB=DIR Scripts/bench.sh web   (another checkout's Client/web, served the same way)
"""
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BASKET_BUILD", os.path.join(ROOT, ".build", "release"))
CHROMIUM = os.environ.get("BASKET_CHROMIUM", "/usr/bin/chromium")
# The web client served: this checkout's, or another's (BASKET_BENCH_WEB=DIR, to measure an older
# version against this one in the same hour).
WEB = os.environ.get("BASKET_BENCH_WEB", os.path.join(ROOT, "Client", "web"))
PASSWORD = "correct horse battery"
ITEMS = 2000
KEYSTROKES = ["chocolate", "milk", "bread", "tomato sauce", "cheese", "apple juice"]
TAPS = 30
# Page loads at each rate: one page load's 47 keystrokes give a p95 that one slow second of this
# shared machine moves by a fifth; three give 141 of them, and 90 taps.
ROUNDS = 3

MEASURE = """() => {
  // Each keystroke's keydown and each tap's click, as the page heard them (event.timeStamp), and
  // the browser's own account of when the next frame after each event's handlers was presented
  // (Event Timing: every event whose handlers and next paint took 16 ms or more).
  window.__samples = { keys: [], taps: [], events: [], key: [], tap: [], drawn: [] };
  // A keystroke: its keydown and the input event that filtered the list.
  let typed = null;
  document.addEventListener("keydown", (e) => { typed = e.key.length === 1 ? e.timeStamp : null; }, true);
  document.addEventListener("input", (e) => {
    if (typed !== null) window.__samples.keys.push([typed, e.timeStamp]);
    typed = null;
  }, true);
  document.addEventListener("click", (e) => {
    if (e.target.closest && e.target.closest("button.check")) window.__samples.taps.push([e.timeStamp, e.timeStamp]);
  }, true);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__samples.events.push([e.name, e.startTime, e.duration]);
  }).observe({ type: "event", durationThreshold: 16 });
  // The older measure, kept for comparison: to a task after the next animation frame (it also
  // counts whatever work is queued before that task: storage, the push to the server).
  let key = null, tap = null;
  const after = (start, into) => requestAnimationFrame(() => setTimeout(() => into.push(performance.now() - start), 0));
  document.addEventListener("keydown", (e) => { key = e.timeStamp; }, true);
  document.addEventListener("input", () => { if (key !== null) { after(key, window.__samples.key); key = null; } });
  let row = null, was = null;
  document.addEventListener("click", (e) => {
    const button = e.target.closest && e.target.closest("button.check");
    if (button) { tap = e.timeStamp; row = button; was = button.getAttribute("aria-checked"); }
  }, true);
  // A tap until its row shows it: from the click to the frame after the one that drew the change
  // (the app stores a write before it draws it: that wait is in this measure, not in
  // Event Timing's, which ends at the first frame after the click's handlers).
  const drawn = (start) => requestAnimationFrame(() => requestAnimationFrame((t) => window.__samples.drawn.push(t - start)));
  new MutationObserver(() => {
    if (tap !== null && (!row.isConnected || row.getAttribute("aria-checked") !== was)) {
      after(tap, window.__samples.tap);
      drawn(tap);
      tap = null;
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["aria-checked"] });
}"""

APP_ROWS = "#items > :not(.off) ul.rows:not(.done) li.item:not(.checked) button.check"
# The static screen's rows do not move when tapped: the same five, checked and unchecked in turn.
BARE_ROWS = "#items > :not(.off) ul.rows:not(.done) li.item button.check"


def interact(page, rows=APP_ROWS):
    """Types the keystrokes into the search field and taps `rows` 30 times (one of the first five
    each time), as MEASURE times them."""
    page.evaluate(MEASURE)
    page.focus("#query")
    # A phone's keyboard takes a quarter of a second or more to come up after the field is
    # tapped, and the page builds its search index when the field is focused: the first key
    # comes half a second later, not at once (at once, it waited for the index: 83–117 ms).
    time.sleep(0.5)
    for word in KEYSTROKES:
        page.keyboard.type(word, delay=120)
        page.fill("#query", "")
        page.dispatch_event("#query", "input")
        time.sleep(0.3)
    page.keyboard.press("Escape")
    time.sleep(0.5)
    for i in range(TAPS):
        # A tap as the screen gets it (mouse down and up at the row's place), not
        # Playwright's click, which runs its own hit-target checks in the page during the
        # click's events (11–16 ms of the page's time at 4×).
        # One of the first five rows to buy: the toast of the last tap covers the
        # bottom of the screen, where a tap would land on it.
        row = page.locator(rows).nth(i % 5)
        row.scroll_into_view_if_needed()
        box = row.bounding_box()
        page.mouse.click(box["x"] + 24, box["y"] + box["height"] / 2)
        time.sleep(0.35)
    time.sleep(1)


def summary(page):
    samples = page.evaluate("window.__samples")
    return {
        "key": to_next_paint(samples["keys"], samples["events"]),
        "tap": to_next_paint(samples["taps"], samples["events"]),
        "drawn": samples["drawn"], "key_task": samples["key"], "tap_task": samples["tap"],
    }


def add(results, key, samples):
    """Adds one page load's samples to those of `key`."""
    into = results.setdefault(key, {})
    for kind, values in samples.items():
        into.setdefault(kind, []).extend(values)


def static_screen(page):
    """The list screen as it is now, as a page of its own: the document without its scripts and
    its policy, with the style sheet inline."""
    css = page.evaluate("""async () => {
      const link = document.querySelector('link[rel=stylesheet]');
      return link ? await (await fetch(link.href)).text() : '';
    }""")
    html = page.evaluate("""() => {
      const copy = document.documentElement.cloneNode(true);
      for (const e of copy.querySelectorAll('script, link, meta[http-equiv], noscript')) e.remove();
      return copy.outerHTML;
    }""")
    return "<!doctype html>" + html.replace("</head>", f"<style>{css}</style></head>", 1)


# The baseline's only script: a tap toggles its row, a keystroke hides the rows that do not
# contain what was typed.
BARE = """() => {
  const items = document.getElementById('items');
  items.addEventListener('click', (e) => {
    const button = e.target.closest('button.check');
    if (!button) return;
    const row = button.parentElement;
    const checked = !row.classList.contains('checked');
    row.classList.toggle('checked', checked);
    button.setAttribute('aria-checked', String(checked));
  });
  const query = document.getElementById('query');
  query.addEventListener('input', () => {
    const text = query.value.toLowerCase();
    for (const row of items.querySelectorAll('li.item')) {
      row.hidden = text !== '' && !row.textContent.toLowerCase().includes(text);
    }
  });
}"""


def to_next_paint(actions, events):
    """Each action's time to the next paint (ms): from its first event to the presentation of the
    frame after its last (Event Timing's startTime + duration for the entry whose startTime is that
    event's timeStamp). An action whose last event took under 16 ms has no entry (Event Timing
    reports none) and counts as 16."""
    out = []
    for start, last in actions:
        ends = [t + d for _, t, d in events if abs(t - last) < 0.5]
        out.append(max([16.0] + [e - start for e in ends]))
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def basket(home, *args, stdin=None):
    result = subprocess.run([os.path.join(BUILD, "basket"), "--db", home, *args], input=stdin, capture_output=True,
                            text=True, timeout=300, env=dict(os.environ, NO_COLOR="1", BASKET_PASSWORD=PASSWORD))
    if result.returncode != 0:
        sys.exit(f"basket {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def names():
    """2,000 distinct grocery names: the quality corpus's everyday names, then its products."""
    seen, out = set(), []
    for path, column in (("Benchmarks/quality/everyday.tsv", -1), ("Benchmarks/quality/products.txt", 0)):
        for line in open(os.path.join(ROOT, path), encoding="utf-8"):
            name = line.rstrip("\n").split("\t")[column].strip()
            if name and "," not in name and name.lower() not in seen and len(name) < 60:
                seen.add(name.lower())
                out.append(name)
    random.Random(28).shuffle(out)
    return out[:ITEMS]


def wait_for_rows(page, timeout=180):
    """Until the list has every item (it draws the first rows and says how many there are in
    all; polled from here: the page's policy forbids eval)."""
    deadline = time.time() + timeout
    while f"({ITEMS} items in all)" not in (page.locator("#items button.more").text_content(timeout=0)
                                               if page.locator("#items button.more").count() else ""):
        if time.time() > deadline:
            sys.exit(f"the list did not show its {ITEMS} items")
        time.sleep(0.5)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    work = tempfile.mkdtemp(prefix="basket-bench-web-")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, BASKET_PASSWORD_ITERATIONS="10000", BASKET_QUIET="1", BASKET_SIGN_INS_PER_ADDRESS="1000")
    server = subprocess.Popen([os.path.join(BUILD, "basket-server"), "--listen", f"127.0.0.1:{port}", "--data",
                               os.path.join(work, "data"), "--web", WEB],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        home = os.path.join(work, "cli")
        basket(home, "remote", "set", url)
        basket(home, "signup", "terminal")
        # --encrypted: the same list encrypted end to end (its code carries the keys after a dot).
        basket(home, "list", "new", "Big list", *(["--encrypted"] if "--encrypted" in sys.argv else []))
        basket(home, "add", "--from", "-", stdin="\n".join(names()) + "\n")
        basket(home, "sync")
        code = basket(home, "share", "--uses", "10").split(": ")[1].split()[0]
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            first = first_visit(browser, url)
            context = browser.new_context(viewport={"width": 390, "height": 844})
            page = context.new_page()
            page.goto(url + "/")
            page.wait_for_selector("html[data-ready=true]")
            # CSS selectors, not roles: finding by role turns Chromium's accessibility tree on for
            # the page, which then costs every change more (as it does with a screen reader on:
            # measured apart, below).
            page.click("p.switch button")
            page.fill("#name", "phone")
            page.fill("#password", PASSWORD)
            page.press("#password", "Enter")
            page.wait_for_selector("#new-list")
            page.goto(f"{url}/#join={code}")
            page.click("dialog button[value=join]")
            wait_for_rows(page)
            cdp = context.new_cdp_session(page)
            list_url = page.url
            # The static screen: the app's own page, its style sheet and its rows as they are
            # once the list is drawn, without the app.
            screen = static_screen(page)
            results = {}
            # Each rate: ROUNDS page loads of the app, each followed by one of the static screen
            # (the machine's noise of that minute reaches both), every sample of them together.
            for rate in (1, 4):
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
                for _ in range(ROUNDS):
                    # From the static page, goto loads the app; on the list already, goto to the
                    # same address only moves within the page: the reload makes it a page load.
                    page.goto(list_url)
                    page.reload()
                    wait_for_rows(page)
                    interact(page)
                    add(results, rate, summary(page))
                    page.goto("about:blank")
                    page.set_content(screen)
                    page.evaluate(BARE)
                    interact(page, BARE_ROWS)
                    add(results, f"bare{rate}", summary(page))
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
            browser.close()
        kind = "an encrypted list" if "--encrypted" in sys.argv else "a list"
        print(f"Web client: {kind} of {ITEMS:,} items in Chromium at 390×844 (ms to the next paint; 4× = CPU slowed 4×)")
        print(f"{'':34} {'n':>4} {'p50':>7} {'p95':>7} {'max':>7} {'p95 / 1×':>9}  target")
        for kind, label in (("key", "keystroke → filtered list"), ("tap", "tap → checked"),
                            ("drawn", "tap → row drawn checked")):
            base = percentile(results[1][kind], 95)
            for rate in (1, 4):
                values = results[rate][kind]
                p95 = percentile(values, 95)
                target = "≤ 50" if rate == 4 else ""
                ratio = f"{p95 / base:.2f}" if rate == 4 else "1.00"
                print(f"{label + f', CPU {rate}×':34} {len(values):>4} {statistics.median(values):>7.1f} {p95:>7.1f} "
                      f"{max(values):>7.1f} {ratio:>9}  {target}")
            for rate in (1, 4):
                values = results[f"bare{rate}"][kind]
                p95 = percentile(values, 95)
                app = percentile(results[rate][kind], 95)
                print(f"{f'  same screen, no app, CPU {rate}×':34} {len(values):>4} {statistics.median(values):>7.1f} "
                      f"{p95:>7.1f} {max(values):>7.1f} {'':>9}  app / this: {app / p95:.2f}")
        print(f"{'first visit, bytes over the wire':34} {first['requests']:>4} {'':>7} {first['bytes'] / 1024:>6.1f}K"
              f" {'':>7} {'':>9}  ≤ 60 KB")
        print("  (an action whose events all took under 16 ms counts as 16: the browser reports none)")
        print("  the older measure, to a task after the next frame (p95, 1× / 4×): keystroke "
              f"{percentile(results[1]['key_task'], 95):.1f} / {percentile(results[4]['key_task'], 95):.1f}, tap "
              f"{percentile(results[1]['tap_task'], 95):.1f} / {percentile(results[4]['tap_task'], 95):.1f}")
        print(f"  of which the page and its modules: {first['page'] / 1024:.1f} KB; kept for offline use by the "
              f"service worker: {first['worker'] / 1024:.1f} KB; the catalogue, fetched when needed: "
              f"{first['catalogue'] / 1024:.1f} KB")
        if "--json" in sys.argv:
            print(json.dumps({"results": results, "first": first}))
    finally:
        server.terminate()
        server.wait(20)
        shutil.rmtree(work, ignore_errors=True)


def first_visit(browser, url):
    """Bytes a first visit moves: every response (headers and gzip body as sent), the page's and
    its service worker's, until the worker has kept the app for offline use."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    sizes = []

    def finished(request):
        try:
            size = request.sizes()
        except Exception:
            return
        body = size["responseBodySize"]
        response = request.response()
        if body == 0 and response is not None and response.status == 200:
            # Chromium reports no body for a service worker's own script: its length, as sent.
            body = int(response.headers.get("content-length", "0"))
        sizes.append((request.url, body + size["responseHeadersSize"], request.service_worker is not None))

    context.on("requestfinished", finished)
    page = context.new_page()
    page.goto(url + "/")
    page.wait_for_selector("html[data-ready=true]")
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    time.sleep(2)
    context.close()
    catalogue = sum(n for u, n, _ in sizes if "catalogue-" in u)
    worker = sum(n for u, n, w in sizes if w and "catalogue-" not in u)
    page_bytes = sum(n for u, n, w in sizes if not w and "catalogue-" not in u)
    return {"requests": len(sizes), "page": page_bytes, "worker": worker, "catalogue": catalogue,
            "bytes": page_bytes + worker + catalogue}


if __name__ == "__main__":
    main()
