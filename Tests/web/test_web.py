"""The web client in a real headless Chromium against a real basket-server, with CLI devices.

Each test says what a person would see. Run by Scripts/web-test.sh (from Scripts/test.sh).
"""
import json
import os
import time
import urllib.request

from conftest import CONTRAST_RATIO, PASSWORD, ROOT, unique, version_of, wait_until


def check_vectors(client, vectors_file, script):
    """Runs Tests/web/`script` in a page with Tests/Vectors/`vectors_file`: the vectors, and what it returned."""
    phone = client()
    phone.open()
    vectors = json.load(open(os.path.join(ROOT, "Tests", "Vectors", vectors_file), encoding="utf-8"))
    check = open(os.path.join(ROOT, "Tests", "web", script), encoding="utf-8").read()
    return vectors, phone.page.evaluate(check, {"vectors": vectors, "base": f"/a/{version_of(phone.page)}/"})


def test_the_conformance_vectors_pass_in_the_browser(client):
    vectors, result = check_vectors(client, "conformance-v1.json", "conformance.js")
    assert result["failures"] == []
    assert result["checked"]["fields"] == 1 and len(vectors["fields"]) >= 9
    assert result["checked"]["errors"] == 1 and len(vectors["errors"]) >= 40
    assert result["checked"]["keys"] == len(vectors["keys"]) > 300
    assert result["checked"]["mergeOrders"] == sum(len(m["orders"]) for m in vectors["merges"])
    assert result["checked"]["searches"] == len(vectors["searches"])
    assert result["checked"]["invalidOps"] == len(vectors["invalidOps"])
    assert result["checked"]["entries"] == len(vectors["entries"])
    assert result["checked"]["localWrites"] == sum(len(c["steps"]) for c in vectors["localWrites"]) > 30
    assert result["checked"]["catalogue"] == len(vectors["catalogue"]) > 30


def test_two_phones_and_a_terminal_converge_after_one_phone_was_offline(client, device):
    alice = client()
    alice.signup(unique("alice"))
    alice.create_list("Family")
    with alice.sent():
        alice.add("Milk")
    with alice.sent():
        alice.add("2 bread, eggs")
    alice.wait_status("Synced")
    code_for_bob = alice.share_code()
    code_for_cli = alice.share_code()

    bob = client()
    bob.signup(unique("bob"))
    # The link a share gives: the code travels in the fragment, the page joins and opens the list.
    bob.join_link(code_for_bob)
    bob.page.wait_for_selector("#query")
    assert wait_until(lambda: bob.items() == {"Milk": False, "bread": False, "eggs": False})

    terminal = device(unique("carol"))
    terminal.run("join", code_for_cli)
    assert terminal.items() == {"Milk": False, "bread": False, "eggs": False}

    # Bob's phone has the app cached: it goes offline, changes the list, reloads, still works.
    bob.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    bob.context.set_offline(True)
    bob.add("Apples")
    bob.page.click("li.item:has-text('Milk') button.check")
    bob.page.click("li.item:has-text('eggs') button.remove")
    # As a person would, reload once the page shows the changes: it redraws after each one is
    # stored. (A reload while IndexedDB still commits the last one may lose it; a full run of
    # Scripts/test.sh once reloaded between the removal and its commit.)
    assert wait_until(lambda: bob.items() == {"Apples": False, "Milk": True, "bread": False})
    bob.wait_status("Offline")
    # Three things changed (Apples, Milk, eggs): three changes, however many fields each wrote.
    assert bob.status() == "Offline · 3 changes waiting", bob.status()
    bob.page.reload()
    bob.page.wait_for_selector("#query")
    bob.wait_items({"Apples": False, "Milk": True, "bread": False})
    assert bob.status().startswith("Offline")

    # Meanwhile the others go on.
    alice.add("Cheese")
    terminal.run("add", "Tea")
    terminal.run("check", "bread")

    bob.context.set_offline(False)
    bob.page.evaluate("dispatchEvent(new Event('online'))")
    bob.wait_status("Synced", timeout=20000)
    terminal.run("sync")
    expected = {"Apples": False, "Milk": True, "bread": True, "Cheese": False, "Tea": False}
    assert wait_until(lambda: bob.items() == expected), bob.items()
    assert wait_until(lambda: alice.items() == expected), alice.items()
    assert terminal.items() == expected


def test_a_change_made_in_the_terminal_shows_in_the_browser_within_two_seconds(client, device):
    phone = client()
    phone.signup(unique("dana"))
    phone.create_list("Weekend")
    with phone.sent():
        phone.add("Coffee")
    phone.wait_status("Synced")
    code = phone.share_code()
    terminal = device(unique("erin"))
    terminal.run("join", code)
    time.sleep(1)  # the page's long-poll is parked
    for name in ["Croissants", "Orange juice", "Jam"]:
        started = time.time()
        terminal.run("add", name)
        phone.page.wait_for_selector(f"li.item:has-text('{name}')", timeout=2000)
        assert time.time() - started < 2.0
    terminal.run("check", "Coffee")
    phone.page.wait_for_selector("li.item.checked:has-text('Coffee')", timeout=2000)


def test_search_as_you_type_ranks_like_basket_search(client, device):
    terminal = device(unique("frank"))
    terminal.run("list", "new", "Shop")
    names = [
        "Milk", "Oat milk", "Milk chocolate", "Buttermilk", "Crème fraîche", "Greek yogurt", "Bread", "Brown bread",
        "Breadcrumbs", "Jalapeño peppers", "Chicken breast", "Coffee beans", "Coca-Cola", "Washing-up liquid",
        "Peanut butter", "Butter", "Bananas", "Banana bread", "Item 2", "Item 10",
    ]
    terminal.run("add", "--from", "-", stdin="\n".join(names))
    terminal.run("check", "Brown bread")
    code = terminal.run("share").stdout.split(": ")[1].split()[0]
    phone = client()
    phone.signup(unique("gina"))
    phone.join_link(code)
    phone.page.wait_for_selector("li.item:has-text('Item 10')")
    assert len(phone.items()) == len(names)
    queries = ["milk", "mil", "bread", "brea", "creme", "yoghurt", "jalapeno", "chikcen", "cocacola", "buter",
               "washing up", "item", "ban", "bnana", "c", "is:checked", "-milk butter", "^butter", "zzz"]
    for query in queries:
        # `basket search` exits 1 when nothing matches (as grep), its JSON printed all the same.
        answer = terminal.run("--json", "search", "--", query, check=False)
        assert answer.returncode in (0, 1), answer.stderr
        cli = json.loads(answer.stdout)
        assert (answer.returncode == 1) == (cli["results"] == []), query
        phone.page.fill("#query", query)
        shown = phone.page.evaluate(
            "() => [...document.querySelectorAll('#items > :not(.off) li.item .name')].map(n => n.textContent)")
        # The phone shows the first six (MATCHES_SHOWN), in the CLI's order, and says when
        # there are more.
        expected = [hit["name"] for hit in cli["results"]]
        assert shown == expected[:6], query
        more = phone.page.get_by_text("More items match: type more of the name to find them.")
        assert more.is_visible() == (len(expected) > 6), query
        offer = phone.page.query_selector("button.offer")
        if cli["offer"] is None:
            assert offer is None, query
        else:
            assert offer is not None and cli["offer"]["name"] in offer.inner_text(), query


def test_an_item_name_is_shown_as_text_never_as_html(client, device):
    phone = client()
    phone.signup(unique("hana"))
    phone.create_list("<b>Tricky</b> list")
    phone.add("<img src=x onerror=alert(1)>")
    code = phone.share_code()
    terminal = device(unique("ivan"))
    terminal.run("join", code)
    terminal.run("add", "<script>alert(2)</script>")
    terminal.run("add", '" onmouseover="alert(3)')
    phone.page.wait_for_selector("li.item:has-text('<script>')")
    phone.page.wait_for_selector("li.item:has-text('onmouseover')")
    names = phone.page.evaluate("() => [...document.querySelectorAll('#items > :not(.off) .name')].map(n => n.textContent)")
    assert sorted(names) == sorted(['" onmouseover="alert(3)', "<img src=x onerror=alert(1)>", "<script>alert(2)</script>"])
    assert phone.page.query_selector_all("#items img, #items script, #items b") == []
    assert phone.page.inner_text("h1.list-title") == "<b>Tricky</b> list"
    phone.page.hover("li.item:has-text('onmouseover')")
    # The client fixture fails the test on any dialog, page error or CSP report.


def test_the_app_is_installable_and_starts_offline(client):
    phone = client()
    phone.signup(unique("jo"))
    manifest = phone.page.evaluate("fetch('/manifest.webmanifest').then(r => r.json())")
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    assert {icon["sizes"] for icon in manifest["icons"]} >= {"192x192", "512x512"}
    policy = phone.page.evaluate("fetch('/').then(r => r.headers.get('content-security-policy'))")
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    phone.create_list("Holiday")
    phone.add("Sun cream")
    phone.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    phone.page.reload()
    assert wait_until(lambda: phone.page.evaluate("navigator.serviceWorker.controller !== null"))
    phone.context.set_offline(True)
    phone.page.goto(phone.server.url + "/")
    phone.page.wait_for_selector("a.list-row:has-text('Holiday')")
    phone.page.click("a.list-row:has-text('Holiday')")
    phone.wait_items({"Sun cream": False})
    phone.context.set_offline(False)


def test_the_list_is_usable_with_the_keyboard_and_labelled(client):
    phone = client()
    phone.signup(unique("kim"))
    phone.create_list("Keys")
    phone.page.focus("#query")
    phone.page.keyboard.type("Rice, 2 lemons")
    phone.page.keyboard.press("Enter")
    phone.page.wait_for_selector("li.item:has-text('lemons')")
    assert phone.page.inner_text("li.item:has-text('lemons') .quantity") == "2"
    # Tab to the first item's checkbox and press Space: it is checked.
    phone.page.focus("li.item:has-text('Rice') button.check")
    phone.page.keyboard.press("Space")
    phone.page.wait_for_selector("li.item.checked:has-text('Rice')")
    assert phone.page.get_attribute("li.item:has-text('Rice') button.check", "aria-checked") == "true"
    assert phone.page.get_attribute("li.item:has-text('lemons') button.remove", "aria-label") == "Remove 2 lemons"
    assert phone.page.get_attribute("#status", "role") == "status"
    # On a 360-pixel-wide screen nothing runs off the side, even a long name.
    phone.page.set_viewport_size({"width": 360, "height": 740})
    phone.add("Extra virgin olive oil from the little shop at the corner of the market square")
    phone.page.wait_for_selector("li.item:has-text('olive oil')")
    assert phone.page.evaluate("document.documentElement.scrollWidth") <= 360
    phone.page.focus("li.item:has-text('Rice') button.check")
    phone.page.keyboard.press("Space")
    phone.page.wait_for_selector("li.item:not(.checked):has-text('Rice')")
    phone.page.keyboard.press("Space")
    phone.page.wait_for_selector("li.item.checked:has-text('Rice')")
    # Undo brings the last change back.
    phone.page.click("#toast button:text('Undo')")
    phone.page.wait_for_selector("li.item:not(.checked):has-text('Rice')")


def test_screenshots_of_the_list_in_light_and_dark(client, device):
    out = os.environ.get("BASKET_SCREENSHOTS") or os.path.join(ROOT, ".build", "web-screenshots")
    os.makedirs(out, exist_ok=True)
    name = unique("lee")
    terminal = device(name)
    terminal.run("list", "new", "Family")
    terminal.run("add", "Milk, Greek yogurt, Bread, Tomatoes, Bananas, Coffee, Crème fraîche, Eggs")
    # Most take the catalogue's aisles by themselves (Milk, Eggs, Bread, Tomatoes, Bananas).
    for item, category in [("Greek yogurt", "Dairy & eggs"), ("Crème fraîche", "Dairy & eggs")]:
        terminal.run("set", item, "--category", category)
    terminal.run("set", "Eggs", "--quantity", "12")
    terminal.run("aisles", "set", "Fruit & vegetables, Bakery, Dairy & eggs")
    terminal.run("check", "Coffee")
    for scheme in ["light", "dark"]:
        phone = client(color_scheme=scheme)
        phone.open()
        phone.signin(name)
        phone.page.click("a.list-row:has-text('Family')")
        phone.page.wait_for_selector("li.item:has-text('Tomatoes')")
        phone.wait_status("Synced")
        # Rows drawn before the catalogue came get their icons once it has (the catalogue's emoji).
        phone.page.locator("li.item:has-text('Milk') .icon").filter(has_text="🥛").wait_for()
        phone.page.locator("li.item:has-text('Bananas') .icon").filter(has_text="🍌").wait_for()
        path = os.path.join(out, f"web-list-{scheme}.png")
        phone.page.screenshot(path=path)
        assert os.path.getsize(path) > 10_000
        # The new screens: an item's sheet, the list's settings, a family share link, and typing.
        phone.page.get_by_role("button", name="Edit 12 Eggs").click()
        phone.page.get_by_role("dialog", name="Edit Eggs").get_by_text("History").click()
        shots = [f"web-item-{scheme}.png"]
        phone.page.screenshot(path=os.path.join(out, shots[-1]))
        phone.page.get_by_role("dialog", name="Edit Eggs").get_by_role("button", name="Close").click()
        phone.page.get_by_role("button", name="List ⋯").click()
        shots.append(f"web-settings-{scheme}.png")
        phone.page.screenshot(path=os.path.join(out, shots[-1]))
        phone.page.get_by_role("dialog", name="This list").get_by_role("button", name="Close").click()
        phone.page.get_by_role("button", name="Share", exact=True).click()
        share = phone.page.get_by_role("dialog", name="Share this list")
        share.get_by_role("button", name="Make a link").click()
        share.locator("#invite-code").wait_for()
        shots.append(f"web-share-{scheme}.png")
        phone.page.screenshot(path=os.path.join(out, shots[-1]))
        share.get_by_role("button", name="Close").click()
        phone.page.fill("#query", "mlik")
        phone.page.get_by_role("button", name="Did you mean “Milk”?").wait_for()
        shots.append(f"web-typing-{scheme}.png")
        phone.page.screenshot(path=os.path.join(out, shots[-1]))
        # A recipe pasted into the field: the preview, one item per line.
        phone.page.fill("#query", "")
        phone.context.grant_permissions(["clipboard-read", "clipboard-write"])
        phone.page.evaluate("t => navigator.clipboard.writeText(t)", "- 500 g minced beef\n- 2 onions, chopped\n- 3 cloves garlic\n- 2 x 400 g tomatoes\n- 250 g mozzarella\n- 1 l milk\n- 2 EL Olivenöl")
        phone.page.get_by_label("Add or find an item").focus()
        phone.page.keyboard.press("Control+V")
        paste = phone.page.get_by_role("dialog", name="Add what was pasted")
        paste.get_by_role("button", name="Add 7 items").wait_for()
        paste.get_by_label("For (a note on every item, optional)").fill("lasagne")
        shots.append(f"web-paste-{scheme}.png")
        phone.page.screenshot(path=os.path.join(out, shots[-1]))
        paste.get_by_role("button", name="Close").click()
        for shot in shots:
            assert os.path.getsize(os.path.join(out, shot)) > 10_000, shot


def test_a_member_removed_keeps_the_list_read_only_and_can_remove_it(client, device):
    owner = device(unique("mia"))
    owner.run("list", "new", "Party")
    owner.run("add", "Crisps, Lemonade")
    code = owner.run("share").stdout.split(": ")[1].split()[0]
    phone = client()
    name = unique("noah")
    phone.signup(name)
    phone.join_link(code)
    phone.page.wait_for_selector("li.item:has-text('Lemonade')")
    owner.run("members", "rm", name)
    phone.page.wait_for_selector("text=no longer shared with you", timeout=5000)
    phone.wait_items({"Crisps": False, "Lemonade": False})
    assert phone.page.is_disabled("#query")
    assert phone.page.is_disabled("li.item:has-text('Crisps') button.check")
    phone.page.click("button:text('Remove it from this device')")
    phone.page.wait_for_selector("#new-list")
    assert phone.page.query_selector("a.list-row:has-text('Party')") is None


def test_two_tabs_of_one_phone_see_each_others_changes_even_offline(client):
    phone = client()
    phone.signup(unique("olga"))
    phone.create_list("Tabs")
    with phone.sent():
        phone.add("Butter")
    phone.wait_status("Synced")
    second = phone.context.new_page()
    second.on("pageerror", lambda e: phone.problems.append(f"second tab: {e}"))
    second.goto(phone.server.url + "/#/")
    second.click("a.list-row:has-text('Tabs')")
    second.wait_for_selector("li.item:has-text('Butter')")
    phone.context.set_offline(True)
    phone.add("Jam")
    second.wait_for_selector("li.item:has-text('Jam')", timeout=3000)
    second.fill("#query", "Honey")
    second.press("#query", "Enter")
    phone.page.wait_for_selector("li.item:has-text('Honey')", timeout=3000)
    # Both tabs wrote while offline: each under its own replica id, so the server keeps both.
    phone.context.set_offline(False)
    for page in (phone.page, second):
        page.evaluate("dispatchEvent(new Event('online'))")
    phone.wait_status("Synced", timeout=20000)
    replicas = phone.page.evaluate("""() => new Promise((resolve) => {
        const open = indexedDB.open('basket');
        open.onsuccess = () => {
            const all = open.result.transaction('registers').objectStore('registers').getAll();
            all.onsuccess = () => resolve([...new Set(all.result.map((r) => r.replica))].length);
        };
    })""")
    assert replicas >= 2
    second.close()


def test_an_invite_link_asks_before_it_joins(client, device):
    """A link anyone may send: the page says who invited to which list as what, and joins only
    when the person says so."""
    owner = device(unique("olga"))
    owner.run("list", "new", "Family")
    owner.run("add", "Milk")
    code = owner.run("share").stdout.split(": ")[1].split()[0]
    phone = client()
    phone.signup(unique("paul"))
    question = phone.join_link(code, answer="Not now")
    assert question == f"{owner.name} invited you to the list “Family” as an editor.", question
    phone.page.wait_for_selector("#new-list")
    assert phone.page.query_selector("a.list-row:has-text('Family')") is None
    # The code was not used: the same link, answered Join, opens the list.
    phone.join_link(code)
    phone.page.wait_for_selector("li.item:has-text('Milk')")
    phone.wait_items({"Milk": False})


def test_a_forged_write_does_not_erase_the_phones_change(client, device):
    """Another member reads the phone's unsent write (its replica id and timestamp) and pushes it
    first with another value. The phone's push is refused (409), it stamps its write anew under a
    new replica id, and its change stands on every device."""
    owner = device(unique("rita"))
    owner.run("list", "new", "Family", "--unencrypted")  # Mallory forges a value in clear
    owner.run("add", "Milk")
    mallory = device(unique("mallory"))
    owner.run("share", "--role", "editor")
    mallory.run("join", owner.run("share").stdout.split(": ")[1].split()[0])
    phone = client()
    phone.signup(unique("sam"))
    phone.join_link(owner.run("share").stdout.split(": ")[1].split()[0])
    phone.page.wait_for_selector("li.item:has-text('Milk')")
    phone.wait_status("Synced")
    phone.context.set_offline(True)
    phone.add("Tea")
    phone.page.wait_for_selector("li.item:has-text('Tea')")
    pending = phone.page.evaluate(
        """() => new Promise((resolve, reject) => {
            const open = indexedDB.open("basket");
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
                const get = open.result.transaction("outbox").objectStore("outbox").getAll();
                get.onsuccess = () => resolve(get.result);
                get.onerror = () => reject(get.error);
            };
        })""")
    name = next(op for op in pending if op["field"] == "name" and op["value"] == "Tea")
    forged = f"basket-ops 1\nL {name['list']}\n{name['item']}\tname\t{name['ts']}\t{name['replica']}\t=Forged\n"
    config = json.load(open(os.path.join(mallory.home, "config.json"), encoding="utf-8"))
    request = urllib.request.Request(
        f"{phone.server.url}/v1/lists/{name['list']}/ops", method="POST",
        data=json.dumps({"ops": forged}).encode(),
        headers={"Authorization": f"Bearer {config['token']}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200  # the phone's replica id had pushed nothing yet: Mallory took it
    phone.context.set_offline(False)
    phone.wait_status("Synced", timeout=20000)
    owner.run("sync")
    mallory.run("sync")
    assert owner.items() == {"Milk": False, "Tea": False}
    assert mallory.items() == {"Milk": False, "Tea": False}
    phone.wait_items({"Milk": False, "Tea": False})


def test_a_phone_whose_long_polls_run_out_stays_synced_and_hears_the_next_change(browser, workspace):
    """A long-poll whose wait runs out with nothing new is answered with a whole page (the
    encoding's header included), which the web client reads: on a server whose waits last a
    second, a phone goes through empty rounds without its status ever leaving "Synced", then
    shows the next change."""
    from conftest import Client, Device, Server
    directory = os.path.join(workspace, f"short-waits-{time.time_ns()}")
    os.makedirs(directory)
    server = Server(directory, args=["--max-wait", "1", "--public-metrics"])
    phone = Client(browser, server)

    def ran_out():
        with urllib.request.urlopen(server.url + "/metrics") as answer:
            for line in answer.read().decode().splitlines():
                if line.startswith("basket_long_polls_run_out "):
                    return float(line.split()[1])
        return 0

    try:
        phone.signup(unique("wendy"))
        phone.create_list("Waits")
        phone.add("Milk")
        phone.page.wait_for_selector("li.item:has-text('Milk')")
        phone.wait_status("Synced")
        # Every text the status line shows from now on.
        phone.page.evaluate("""() => {
            const status = document.querySelector('#status');
            window.statusesSeen = [];
            new MutationObserver(() => window.statusesSeen.push(status.textContent))
                .observe(status, {subtree: true, childList: true, characterData: true});
        }""")
        before = ran_out()
        # Three of the phone's long-polls ran out with nothing new (no other device waits).
        assert wait_until(lambda: ran_out() >= before + 3), ran_out()
        phone.wait_status("Synced")
        seen = phone.page.evaluate("() => window.statusesSeen")
        assert all(text.startswith("Synced") for text in seen), seen
        code = phone.share_code()
        terminal = Device(os.path.join(workspace, f"cli-waits-{time.time_ns()}"), server)
        terminal.run("remote", "set", server.url)
        terminal.run("signup", unique("xavier"))
        terminal.run("join", code)
        terminal.run("add", "Eggs")
        phone.wait_items({"Milk": False, "Eggs": False})
        phone.wait_status("Synced")
        assert phone.problems == [], phone.problems
    finally:
        phone.close()
        server.stop()


def test_a_refused_list_is_marked_and_the_others_still_sync(browser, workspace):
    """A list the server refuses (full: a server that keeps 3 items a list) does not stop the
    sync of the others: the lists screen marks it "not synced", not the others, the status line
    says which trouble there is, and a list added after it reaches the server."""
    from conftest import Client, Device, Server
    directory = os.path.join(workspace, f"small-lists-{time.time_ns()}")
    os.makedirs(directory)
    server = Server(directory, args=["--max-items", "3"])
    phone = Client(browser, server)
    try:
        name = unique("yara")
        phone.signup(name)
        phone.create_list("Big")
        phone.add("one, two, three, four, five")
        phone.wait_status("Not synced")
        phone.page.get_by_role("link", name="All lists").click()
        phone.page.get_by_role("heading", name="Your lists").wait_for()
        phone.page.get_by_role("link", name="Big · encrypted · not synced").wait_for()
        # Not create_list: the status line stays "Not synced" while Big is refused.
        phone.page.fill("#new-list", "Small")
        phone.page.press("#new-list", "Enter")
        phone.page.wait_for_selector("#query")
        phone.add("Milk")
        phone.page.wait_for_selector("li.item:has-text('Milk')")
        phone.page.get_by_role("link", name="All lists").click()
        phone.page.get_by_role("heading", name="Your lists").wait_for()
        # Small synced (its row unmarked) while Big is still refused.
        phone.page.get_by_role("link", name="Big · encrypted · not synced").wait_for()
        small = phone.page.get_by_role("link", name="Small")
        small.wait_for()
        assert "not synced" not in small.inner_text(), small.inner_text()
        phone.wait_status("Not synced: 1 list")
        terminal = Device(os.path.join(workspace, f"cli-small-{time.time_ns()}"), server)
        terminal.run("remote", "set", server.url)
        terminal.run("login", name)
        terminal.run("sync")
        assert "Milk" in terminal.run("--list", "Small", "ls").stdout
    finally:
        phone.close()
        server.stop()


PLACEHOLDER_CONTRAST = """(selector) => {""" + CONTRAST_RATIO + """
  const element = document.querySelector(selector);
  return ratio(rgb(getComputedStyle(element, "::placeholder").color), rgb(getComputedStyle(element).backgroundColor));
}"""

COVERED = """() => {
  // What stays on screen whatever is scrolled: the parts of the page fixed or sticky.
  let covered = 0;
  for (const element of document.querySelectorAll(".bar, .search, .footer")) {
    const position = getComputedStyle(element).position;
    if (position === "fixed" || position === "sticky") covered += element.getBoundingClientRect().height;
  }
  return covered / innerHeight;
}"""


def test_at_200_percent_zoom_the_field_keeps_its_size_and_the_list_its_room(client):
    """At 200 % zoom (a 390×844 phone lays the page out in 195×422 CSS
    pixels) the add field shrank to 28 px and the header and footer, which stay on screen,
    covered 44 % of it; the dark theme's placeholder had 3.96:1 against its field. Now the field
    stays 44 px or more, what stays on screen covers 15 % or less, and the placeholder holds
    4.5:1 in both schemes (at 100 % too)."""
    for scheme in ("light", "dark"):
        phone = client(viewport={"width": 195, "height": 422}, device_scale_factor=4, color_scheme=scheme)
        phone.signup(unique("zoe"))
        phone.create_list("Zoom")
        phone.add("Milk, Bread, Eggs, Tea, Rice, Soap, Jam, Oats, Salt, Flour")
        phone.page.get_by_role("checkbox", name="Soap").wait_for()
        field = phone.page.get_by_label("Add or find an item")
        assert field.bounding_box()["height"] >= 44, (scheme, field.bounding_box())
        covered = phone.page.evaluate(COVERED)
        assert covered <= 0.15, f"{scheme}: {covered:.0%} of the screen stays covered"
        ratio = phone.page.evaluate(PLACEHOLDER_CONTRAST, "#query")
        assert ratio >= 4.5, f"{scheme}: placeholder contrast {ratio:.2f}"
        # Typed into, it still finds and adds.
        field.fill("Pepper")
        field.press("Enter")
        phone.page.get_by_role("checkbox", name="Pepper").wait_for()
        phone.page.set_viewport_size({"width": 390, "height": 844})
        ratio = phone.page.evaluate(PLACEHOLDER_CONTRAST, "#query")
        assert ratio >= 4.5, f"{scheme} at 100 %: placeholder contrast {ratio:.2f}"
        assert phone.page.evaluate(COVERED) <= 0.25


def test_the_seal_vectors_pass_in_the_browser(client):
    """The encrypted lists' derivations and seals (docs/encryption.md) made by WebCrypto are the
    bytes the Swift made, and every refusal of the vectors is refused."""
    vectors, result = check_vectors(client, "seal-v1.json", "seal-vectors.js")
    assert result["failures"] == []
    for kind in ["ids", "plaintexts", "seals", "refused", "accounts", "wraps", "recovery", "badCodes"]:
        assert result["checked"][kind] == len(vectors[kind]) > 0, kind
    assert result["checked"]["envelopes"] == 1 and result["checked"]["badInvites"] == len(vectors["badInvites"])
    assert result["checked"]["snapshots"] == len(vectors["snapshots"]) > 0
    assert result["checked"]["snapshotRoundTrip"] == 1
    assert result["checked"]["conversions"] == len(vectors["conversions"]) > 0
