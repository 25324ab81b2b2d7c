"""Together in the shop, on a phone: a push notification written by the service worker from the
message and the phone's own copy of the list. A real basket-server, a real CLI device, Chromium
at 390×844; the push is delivered to the service worker through the DevTools protocol (a real
push service is not reachable from here), found by role and label where a person looks."""
import json
import time

from conftest import unique, wait_until


def shared_with_a_phone(client, device, title="Family", encrypted=True):
    """An owner at a terminal with a list (encrypted, as every new list is, unless not), and a
    phone that joined it by link."""
    owner = device(unique("anna"))
    owner.run("list", "new", title, *([] if encrypted else ["--unencrypted"]))
    owner.run("add", "Milk")
    code = owner.json("share")["code"]
    phone = client()
    phone.name = unique("bob")
    phone.signup(phone.name)
    phone.join_link(code)
    phone.page.get_by_role("checkbox", name="Milk").wait_for()
    phone.wait_status("Synced")
    return owner, phone


def service_worker_registration(phone, cdp):
    """The id DevTools knows the page's service worker registration by, once it is active."""
    registrations = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    cdp.send("ServiceWorker.enable")
    phone.page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
    found = wait_until(lambda: [r for r in registrations if not r.get("isDeleted")], timeout=15)
    assert found, "no service worker registration"
    return found[-1]["registrationId"]


def notifications(phone):
    return phone.page.evaluate(
        "() => navigator.serviceWorker.ready.then(r => r.getNotifications())"
        ".then(ns => ns.map(n => ({ title: n.title, body: n.body, tag: n.tag })))")


def test_a_push_shows_anna_added_5_items_from_the_message_and_the_phones_copy(client, device, server):
    # Plain: the messages below are written here, in clear (an encrypted list's: test_encryption.py).
    owner, phone = shared_with_a_phone(client, device, encrypted=False)
    owner.run("add", "Eggs, Bread, Butter, Jam")
    for name in ["Eggs", "Bread", "Butter", "Jam"]:
        phone.page.get_by_role("checkbox", name=name).wait_for()
    ids = {item["name"]: item["id"] for item in owner.json("ls")["items"]}
    list_id = owner.json("ls")["list"]["id"]
    phone.context.grant_permissions(["notifications"], origin=server.url)
    cdp = phone.context.new_cdp_session(phone.page)
    registration = service_worker_registration(phone, cdp)
    # What the server sends: who, how many, ids only; one id this phone does not know yet.
    message = {"v": 1, "list": list_id, "at": int(time.time() * 1000), "events": [
        {"kind": "added", "who": owner.name, "count": 5,
         "items": [ids["Eggs"], ids["Bread"], ids["Butter"], ids["Jam"], "0" * 32]}]}
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": server.url, "registrationId": registration, "data": json.dumps(message)})
    shown = wait_until(lambda: notifications(phone), timeout=15)
    assert shown, "no notification was shown"
    assert shown[0]["title"] == "Family"
    assert shown[0]["body"] == f"{owner.name} added 5 items: Eggs, Bread, Butter and 2 more", shown[0]["body"]
    assert shown[0]["tag"] == f"basket-{list_id}"
    # Going shopping, and a message that is not one (shown as nothing).
    cdp.send("ServiceWorker.deliverPushMessage", {"origin": server.url, "registrationId": registration,
                                                  "data": json.dumps({"v": 9, "list": "x"})})
    cdp.send("ServiceWorker.deliverPushMessage", {"origin": server.url, "registrationId": registration, "data": json.dumps(
        {"v": 1, "list": list_id, "at": 1, "events": [{"kind": "shopping", "who": owner.name, "count": 0, "items": [], "shop": "Lidl"}]})})
    assert wait_until(lambda: any(n["body"] == f"{owner.name} is shopping at Lidl" for n in notifications(phone)), timeout=15), \
        notifications(phone)
    assert len(notifications(phone)) == 1  # one per list: the newer replaced the older


def test_going_shopping_shows_live_on_the_phone_and_done_tells_the_terminal(client, device):
    owner, phone = shared_with_a_phone(client, device)
    owner.run("add", "Eggs")
    phone.page.get_by_role("checkbox", name="Eggs").wait_for()
    together = phone.page.get_by_role("status").filter(has_text="shopping")
    # Olga says so at the terminal: the open list shows it at once, without a reload.
    owner.run("shopping", "start", "--at", "Lidl")
    phone.page.get_by_text(f"{owner.name} is shopping at Lidl · since").wait_for()
    # The phone goes too, naming its shop.
    phone.page.get_by_role("button", name="I'm going shopping").click()
    dialog = phone.page.get_by_role("dialog", name="Going shopping")
    dialog.get_by_label("Shop (if you like)").fill("Rewe")
    dialog.get_by_role("button", name="Tell the others").click()
    phone.page.get_by_text("You are shopping at Rewe · since").wait_for()
    assert "shopping" in together.first.inner_text()
    assert wait_until(lambda: f"{phone.name} is shopping at Rewe" in owner.run("shopping").stdout), owner.run("shopping").stdout
    # Two items checked off in the shop, then done: the terminal hears what was bought.
    phone.page.get_by_role("checkbox", name="Milk").click()
    phone.page.get_by_role("checkbox", name="Eggs").click()
    phone.wait_items({"Milk": True, "Eggs": True})
    phone.page.get_by_role("button", name="Done shopping").click()
    phone.page.get_by_text("Done shopping: you bought 2 items").wait_for()
    phone.page.get_by_text("You bought 2 items at Rewe ·").wait_for()
    assert wait_until(lambda: f"{phone.name} bought 2 items at Rewe" in owner.run("shopping").stdout), owner.run("shopping").stdout
    phone.page.get_by_role("button", name="I'm going shopping").wait_for()


def test_notifications_are_asked_for_only_when_turned_on_and_a_refusal_is_said(client, device, server):
    owner, phone = shared_with_a_phone(client, device)
    # Nothing asked on opening the list: the browser's permission is still undecided.
    assert phone.page.evaluate("() => Notification.permission") == "default"
    phone.page.get_by_role("button", name="List ⋯").click()
    phone.page.get_by_role("dialog", name="This list").get_by_role("button", name="Notifications").click()
    sheet = phone.page.get_by_role("dialog", name="Notifications")
    sheet.get_by_label("Tell me about this list on this phone").check()
    assert sheet.get_by_label("Someone going shopping").is_checked()
    sheet.get_by_role("button", name="Save").click()
    # Headless Chromium answers the permission prompt with a refusal: said, and nothing kept.
    sheet.get_by_role("alert").filter(has_text="Notifications are blocked for this site").wait_for()
    assert phone.page.evaluate("() => indexedDB.databases().then(() => true)")
    # Allowed: this browser has no push service to reach from here, which is said too.
    phone.context.grant_permissions(["notifications"], origin=server.url)
    sheet.get_by_role("button", name="Save").click()
    alert = sheet.get_by_role("alert")
    wait_until(lambda: "could not be turned on" in alert.inner_text() or not sheet.is_visible(), timeout=20)
    if sheet.is_visible():
        assert "this browser's push service did not answer" in alert.inner_text(), alert.inner_text()
    else:
        phone.page.get_by_text("Notifications on for this list").wait_for()
    # Chromium says so in the console: a Playwright context is an incognito one, where Chrome
    # has no Push API (its words, not the page's).
    phone.problems = [p for p in phone.problems if "does not support the Push API in incognito mode" not in p]


def test_what_another_device_did_is_marked_with_who_and_a_lost_check_is_told(client, device):
    owner, phone = shared_with_a_phone(client, device)
    owner.run("add", "Eggs, Bread, Butter")
    phone.page.get_by_text(f"{owner.name} added 3 items").wait_for()
    for name in ["Eggs", "Bread", "Butter"]:
        row = phone.page.locator("li.item", has=phone.page.get_by_role("checkbox", name=name))
        assert f"new: {owner.name}" in row.inner_text(), row.inner_text()
    assert f"new: {owner.name}" not in phone.page.locator("li.item", has=phone.page.get_by_role("checkbox", name="Milk")).inner_text()
    # The phone checks milk; the terminal, later, unchecks it: the phone is told once.
    phone.page.get_by_role("checkbox", name="Milk").click()
    phone.wait_items({"Milk": True, "Eggs": False, "Bread": False, "Butter": False})
    phone.wait_status("Synced")
    assert wait_until(lambda: any(i["name"] == "Milk" and i["checked"] for i in owner.json("ls")["items"]))
    owner.run("uncheck", "milk")
    phone.page.get_by_text(f"{owner.name} unchecked Milk after you checked it").wait_for()
    # Opened again: nothing is new any more.
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.get_by_role("link", name="Family").click()
    phone.page.get_by_role("checkbox", name="Eggs").wait_for()
    assert "new:" not in phone.page.locator("#items").inner_text()


def test_a_speakers_text_is_filed_on_the_open_list_and_a_key_is_made_on_the_phone(client, device, server):
    import urllib.request
    owner, phone = shared_with_a_phone(client, device)
    made = owner.json("share", "--add-only", "--name", "Kitchen speaker")
    list_id = made["list"]
    request = urllib.request.Request(
        f"{server.url}/v1/lists/{list_id}/inbox", data=json.dumps({"text": "2 bananas, bread"}).encode(),
        headers={"Authorization": f"Bearer {made['key']}", "Content-Type": "application/json"}, method="POST")
    assert urllib.request.urlopen(request).status == 202
    # The open list hears of it and files it, once, credited.
    phone.page.get_by_text("From Kitchen speaker: Added bananas (2), bread").wait_for()
    phone.page.get_by_role("checkbox", name="bread").wait_for()
    assert "added by Kitchen speaker" in phone.page.locator("li.item", has=phone.page.get_by_role("checkbox", name="bread")).inner_text()
    assert wait_until(lambda: {"bananas", "bread", "Milk"} <= {i["name"] for i in owner.json("ls")["items"]})
    # The phone makes a key of its own.
    phone.page.get_by_role("button", name="List ⋯").click()
    phone.page.get_by_role("dialog", name="This list").get_by_role("button", name="A key for a speaker").click()
    sheet = phone.page.get_by_role("dialog", name="A key that can only add")
    sheet.get_by_label("What is it for?").fill("Hall shortcut")
    sheet.get_by_role("button", name="Make the key").click()
    sheet.get_by_label("Add-only key").wait_for()
    assert sheet.get_by_label("Add-only key").inner_text().startswith("bk_")
    assert "Hall shortcut" in owner.run("invites").stdout


def two_instances(workspace):
    """Two basket-server instances on one new PostgreSQL database (BASKET_TEST_POSTGRES, which
    Scripts/test.sh starts), each on a port of its own; skipped without a database."""
    import os
    import subprocess
    import urllib.parse

    import pytest

    from conftest import Server

    base = os.environ.get("BASKET_TEST_POSTGRES")
    if not base:
        pytest.skip("BASKET_TEST_POSTGRES is not set (Scripts/test.sh sets it)")
    name = unique("basket_web_")
    subprocess.run(["psql", base, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    url = urllib.parse.urlsplit(base)._replace(path="/" + name).geturl()
    servers = []
    for index in range(2):
        directory = os.path.join(workspace, f"{name}-{index}")
        os.makedirs(directory, exist_ok=True)
        servers.append(Server(directory, args=("--store", url, "--connections", "4")))
    return servers


def test_going_shopping_on_one_instance_shows_live_on_a_phone_served_by_another(browser, workspace):
    from conftest import Client, Device

    first, second = two_instances(workspace)
    try:
        owner = Device(f"{workspace}/cli-{unique('olga')}", first)
        owner.name = unique("olga")
        owner.run("remote", "set", first.url)
        owner.run("signup", owner.name)
        owner.run("list", "new", "Family")
        owner.run("add", "Milk")
        code = owner.json("share")["code"]
        phone = Client(browser, second)
        try:
            phone.name = unique("maya")
            phone.signup(phone.name)
            phone.join_link(code)
            phone.page.get_by_role("checkbox", name="Milk").wait_for()
            phone.wait_status("Synced")
            # Said on the first instance, seen live on the phone, whose long-poll is on the second.
            owner.run("shopping", "start", "--at", "Lidl")
            phone.page.get_by_text(f"{owner.name} is shopping at Lidl · since").wait_for()
            owner.run("check", "milk")
            owner.run("shopping", "done")
            phone.page.get_by_text(f"{owner.name} bought 1 item at Lidl ·").wait_for()
            assert phone.problems == [], phone.problems
        finally:
            phone.close()
    finally:
        first.stop()
        second.stop()
