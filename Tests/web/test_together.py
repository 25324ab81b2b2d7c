"""Together in the shop, on a phone: a push notification written by the service worker from the
message and the phone's own copy of the list. A real basket-server, a real CLI device, Chromium
at 390×844; the push is delivered to the service worker through the DevTools protocol (a real
push service is not reachable from here), found by role and label where a person looks."""
import json
import time

from conftest import unique, wait_until


def shared_with_a_phone(client, device, title="Family"):
    """An owner at a terminal with a list, and a phone that joined it by link."""
    owner = device(unique("anna"))
    owner.run("list", "new", title)
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
    owner, phone = shared_with_a_phone(client, device)
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
