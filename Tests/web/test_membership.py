"""Membership changes that reach an open phone: made a viewer while
the list is open, removed while offline, invited back, a list deleted. A real basket-server, a
real CLI device for the owner, Chromium at 390×844; found by role and label."""
from conftest import unique


def shared_with_a_phone(client, device, title="Family"):
    """An owner at a terminal with a list holding Milk, and a phone that joined it by link."""
    owner = device(unique("olga"))
    owner.run("list", "new", title)
    owner.run("add", "Milk")
    code = owner.json("share")["code"]
    phone = client()
    phone.name = unique("maya")
    phone.signup(phone.name)
    phone.join_link(code)
    phone.page.get_by_role("checkbox", name="Milk").wait_for()
    phone.wait_status("Synced")
    return owner, phone


def added_offline_meanwhile(phone, name, meanwhile):
    """The phone adds `name` offline (stored, waiting), `meanwhile` happens, the phone is back."""
    phone.context.set_offline(True)
    phone.add(name)
    phone.page.get_by_role("checkbox", name=name).wait_for()
    meanwhile()
    phone.context.set_offline(False)


def test_made_a_viewer_while_the_list_is_open_and_a_refused_change_discarded(client, device, server):
    """Finding 7: the screen stayed editable until a reload, an add said "Added" and never
    reached anyone, and the phone had no way to drop a refused change."""
    owner, phone = shared_with_a_phone(client, device)
    field = phone.page.get_by_label("Add or find an item")
    assert field.is_enabled()
    assert wait_for_watchers(server)
    owner.run("members", "role", phone.name, "viewer")
    # At once, without a reload: read-only, and said.
    phone.page.get_by_role("note").filter(has_text="You can view this list").wait_for()
    assert field.is_disabled()
    # Made an editor again, it takes edits again; offline, one waits; made a viewer meanwhile.
    owner.run("members", "role", phone.name, "editor")
    phone.page.wait_for_function("() => !document.getElementById('query').disabled")
    added_offline_meanwhile(phone, "Cake", lambda: owner.run("members", "role", phone.name, "viewer"))
    # Back online, the push is refused: the change is shown as not sent, with what it was.
    phone.page.get_by_role("note").filter(has_text="1 change not sent: Cake: added, category 'Bakery'.").wait_for()
    phone.wait_status("Synced · 1 change not sent")
    phone.page.get_by_role("button", name="Discard").click()
    dialog = phone.page.get_by_role("dialog", name="Discard 1 change?")
    dialog.get_by_text("Cake: added").wait_for()
    dialog.get_by_role("button", name="Discard").click()
    phone.wait_items({"Milk": False})
    phone.wait_status("Synced")
    assert phone.status() == "Synced"
    assert "Cake" not in owner.run("ls").stdout


def test_removed_while_offline_the_waiting_change_is_kept_copied_and_removed_only_when_asked(client, device):
    """Finding 8: "Sending 1 change…" forever, and "Remove it from this device" dropped the
    change without asking. Finding 9: invited back, the list stayed read-only and stopped
    updating until a reload."""
    owner, phone = shared_with_a_phone(client, device)
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.fill("#new-list", "Mine")
    phone.page.press("#new-list", "Enter")
    phone.page.wait_for_selector("#query")
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.click("a.list-row:has-text('Family')")
    phone.page.get_by_role("checkbox", name="Milk").wait_for()
    added_offline_meanwhile(phone, "Candles", lambda: owner.run("members", "rm", phone.name, "--yes"))
    phone.page.get_by_role("note").filter(has_text="This list is no longer shared with you").wait_for()
    phone.page.get_by_role("note").filter(has_text="1 change not sent: Candles: added, category 'Household'.").wait_for()
    phone.wait_status("Synced · 1 change not sent")
    # Copied to another list, it is not lost with this one.
    phone.page.get_by_role("button", name="Copy to another list").click()
    phone.page.get_by_role("dialog", name="Copy to another list").get_by_role("button", name="Copy to Mine").click()
    phone.page.get_by_role("status").filter(has_text="Copied 1 item to Mine").wait_for()
    # Removing the list asks first, naming what goes with it; "Close" keeps it.
    phone.page.get_by_role("button", name="Remove it from this device").click()
    ask = phone.page.get_by_role("dialog", name="Remove it from this device?")
    ask.get_by_text("Candles: added").wait_for()
    ask.get_by_role("button", name="Close").click()
    ask.wait_for(state="detached")
    phone.page.get_by_role("note").filter(has_text="1 change not sent: Candles: added, category 'Household'.").wait_for()

    # Invited back: editable again, the old marks gone, and it follows the owner's changes live.
    code = owner.json("share")["code"]
    phone.join_link(code)
    phone.page.get_by_role("checkbox", name="Milk").wait_for()
    phone.page.wait_for_function("() => !document.getElementById('query').disabled")
    assert phone.page.get_by_text("no longer shared with you").count() == 0
    owner.run("add", "Rolls")
    phone.page.get_by_role("checkbox", name="Rolls").wait_for()
    # What waited from before is sent now that the list takes it.
    phone.wait_status("Synced")
    owner.run("sync")
    assert "Candles" in owner.run("ls").stdout
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.click("a.list-row:has-text('Mine')")
    phone.page.get_by_role("checkbox", name="Candles").wait_for()


def test_a_deleted_list_leaves_nothing_behind(client):
    """Finding 10: each deleted list left an "(untitled) · no longer shared · empty" entry, which
    survived reloads (the server's 404 to the list's long-poll made it again after it was
    forgotten)."""
    phone = client()
    phone.signup(unique("ivy"))
    for title in ("One", "Two", "Three"):
        phone.create_list(title)
        phone.add("Milk")
        phone.page.get_by_role("checkbox", name="Milk").wait_for()
        phone.wait_status("Synced")
        phone.page.get_by_role("button", name="List ⋯").click()
        phone.page.get_by_role("dialog", name="This list").get_by_role("button", name="Delete the list").click()
        phone.page.get_by_role("dialog", name=f"Delete {title}?").get_by_role("button", name="Delete").click()
        phone.page.get_by_role("heading", name="Your lists").wait_for()
        phone.page.get_by_role("status").filter(has_text=f"Deleted {title}").wait_for()
        phone.wait_status("Synced")
    phone.page.reload()
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    phone.wait_status("Synced")
    rows = phone.page.locator("a.list-row").all_inner_texts()
    assert rows == [], rows


def wait_for_watchers(server):
    """Whether a long-poll is parked on the server (the phone's list is being watched)."""
    import time
    import urllib.request

    deadline = time.time() + 20
    while time.time() < deadline:
        with urllib.request.urlopen(server.url + "/metrics") as answer:
            for line in answer.read().decode().splitlines():
                if line.startswith("basket_watchers ") and float(line.split()[1]) >= 1:
                    return True
        time.sleep(0.05)
    return False
