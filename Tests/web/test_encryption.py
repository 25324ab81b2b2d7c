"""Lists encrypted end to end across the terminal and the phone (docs/encryption.md): a list made
encrypted in the terminal, joined by its link in Chromium (the title opened on the phone from the
keys after the link's "#"), edited offline on both, converging; and one made encrypted on the
phone, shared back to a terminal. The server's files hold none of their words."""
import glob
import json
import os
import time
import urllib.request

from conftest import PASSWORD, Device, unique, wait_until


def server_bytes(server):
    """Every byte in the server's data folder (its SQLite file and write-ahead log)."""
    data = b""
    for path in glob.glob(os.path.join(server.directory, "data", "*")):
        with open(path, "rb") as f:
            data += f.read()
    return data


def milks(items):
    return [name for name in items if name.lower() == "milk"]


def test_a_terminal_list_joined_by_link_on_the_phone_converges_after_both_were_offline(client, device, server):
    title, ring, bubbly = unique("Secretsurprise"), unique("Ringbox"), unique("Bubbly")
    alice = device(unique("alice"))
    alice.run("list", "new", title, "--encrypted")
    alice.run("add", f"{ring}, {bubbly}")
    code = alice.json("share")["code"]
    assert ".k1." in code and len(code) == 114

    phone = client()
    phone.signup(unique("bob"))
    # The link's keys stay in the page: the server's preview carries the title sealed, and the
    # question names it.
    question = phone.join_link(code)
    assert title in question
    phone.page.wait_for_selector("#query")
    phone.wait_items({ring: False, bubbly: False})
    phone.page.get_by_role("heading", name=title).wait_for()

    # Both offline: the phone adds Milk and flowers, the terminal adds milk and checks the bubbly.
    phone.context.set_offline(True)
    phone.add("Milk")
    phone.add("Flowers")
    alice.run("--no-sync", "add", "milk")
    alice.run("--no-sync", "check", bubbly)
    phone.context.set_offline(False)
    phone.wait_status("Synced")
    alice.run("sync")
    wait_until(lambda: len(phone.items()) == 4 and phone.items().get(bubbly) is True)
    alice.run("sync")
    on_phone, in_terminal = phone.items(), alice.items()
    assert len(milks(on_phone)) == 1 and len(milks(in_terminal)) == 1
    assert on_phone == in_terminal
    assert set(on_phone) == {ring, bubbly, "Flowers", milks(on_phone)[0]}

    # What the server wrote holds none of it.
    stored = server_bytes(server)
    for word in (title, ring, bubbly):
        assert word.encode() not in stored, f"{word} is in the server's files"
    assert phone.problems == []


def test_a_list_made_encrypted_on_the_phone_is_shared_with_a_terminal(client, device, server):
    title, item = unique("Giftlist"), unique("Necklace")
    phone = client()
    phone.signup(unique("carol"))
    phone.page.get_by_label("New list").fill(title)
    # Ticked before anyone ticks it: every new list is encrypted unless unticked.
    assert phone.page.get_by_label("Encrypted end to end (the server reads none of it)").is_checked()
    phone.page.get_by_role("button", name="Create").click()
    phone.page.wait_for_selector("#query")
    phone.wait_status("Synced")
    phone.add(item)
    phone.wait_items({item: False})
    phone.wait_status("Synced")
    code = phone.share_code()
    assert ".k1." in code
    dave = device(unique("dave"))
    # Without its keys the code is refused before it is spent; with them the list reads.
    refused = dave.run("join", code.split(".")[0], check=False)
    assert refused.returncode != 0 and "encrypted end to end" in refused.stderr
    dave.run("join", code)
    assert dave.items() == {item: False}
    dave.run("check", item)
    wait_until(lambda: phone.items() == {item: True})
    stored = server_bytes(server)
    assert title.encode() not in stored and item.encode() not in stored
    phone.page.goto(server.url + "/#/")
    phone.page.get_by_role("link", name=f"{title} · encrypted").wait_for()
    assert phone.problems == []


def signed_in_twice(client, device, prefix):
    """An account made in the terminal, with an encrypted list of one item synced, and a phone
    signed in to the same account: (name, title, item, phone)."""
    name, title, ring = unique(prefix), unique("Giftlist"), unique("Ringbox")
    terminal = device(name)
    terminal.run("list", "new", title, "--encrypted")
    terminal.run("add", ring)
    terminal.run("sync")
    phone = client()
    phone.open()
    phone.signin(name)
    return name, title, ring, phone


def test_a_password_changed_on_the_phone_keeps_the_accounts_encrypted_lists_open(client, device, workspace, server):
    """The terminal's signup gave the account a key pair (its private key wrapped under the
    password's key): the phone signs in, changes the password, and a new terminal signed in with
    the new one opens the encrypted list with the keys the first left for the account."""
    name, title, ring, phone = signed_in_twice(client, device, "nora")
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    phone.change_password(name, PASSWORD, "another long password")

    laptop = Device(os.path.join(workspace, f"cli-laptop-{unique('l')}"), server)
    laptop.run("remote", "set", server.url)
    assert laptop.run("login", name, check=False).returncode != 0, "the old password no longer signs in"
    laptop.run("login", name, env={"BASKET_PASSWORD": "another long password"})
    laptop.run("list", "use", title)
    assert laptop.items() == {ring: False}
    # The server never held either password.
    stored = server_bytes(server)
    assert PASSWORD.encode() not in stored and b"another long password" not in stored


def test_the_accounts_encrypted_lists_open_on_its_other_devices_after_sign_in(client, device, workspace, server):
    """No link, no code: a terminal's encrypted list opens on the phone signed in to the same
    account (its keys sealed to the account's key pair), and the phone's on a new terminal. A
    phone's signup shows the recovery code once, which the terminal's recover takes."""
    name, title, ring, phone = signed_in_twice(client, device, "olive")
    phone.page.get_by_role("link", name=f"{title} · encrypted").click()
    phone.wait_items({ring: False})
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    phone.page.get_by_label("New list").fill("Party")
    phone.page.get_by_label("Encrypted end to end (the server reads none of it)").check()  # as it was
    phone.page.get_by_role("button", name="Create").click()
    phone.page.wait_for_selector("#query")
    phone.add("Cake")
    phone.wait_items({"Cake": False})
    phone.wait_status("Synced")

    laptop = Device(os.path.join(workspace, f"cli-laptop-{unique('l')}"), server)
    laptop.run("remote", "set", server.url)
    laptop.run("login", name)
    laptop.run("list", "use", "Party")
    assert laptop.items() == {"Cake": False}
    assert "encrypted" in laptop.run("lists").stdout

    # A phone's signup gives its account a key pair and shows the recovery code once.
    other = client()
    newcomer = unique("pia")
    other.signup(newcomer)
    assert len(other.recovery_code.replace("-", "")) == 26
    spare = Device(os.path.join(workspace, f"cli-spare-{unique('s')}"), server)
    spare.run("remote", "set", server.url)
    spare.run("recover", newcomer, "--password-stdin", stdin=f"{other.recovery_code}\nthird long password\n")
    spare.run("login", newcomer, env={"BASKET_PASSWORD": "third long password"})


def encrypted_with_a_phone(client, device, title):
    """A terminal's encrypted list holding Milk, and a phone that joined it by link: (alice, phone)."""
    alice = device(unique("alice"))
    alice.run("list", "new", title, "--encrypted")
    alice.run("add", "Milk")
    phone = client()
    phone.signup(unique("bob"))
    phone.join_link(alice.json("share")["code"])
    phone.page.wait_for_selector("#query")
    phone.wait_items({"Milk": False})
    return alice, phone


def synced_with(device, name):
    """Whether `name` is on the device's current list after a sync."""
    device.run("sync")
    return name in device.items()


def test_a_member_removed_or_leaving_renews_the_key_and_the_phone_follows(client, device, server):
    """The terminal's owner removes a member: its device makes the list's next key. The phone,
    holding the old one, has its next change refused, takes the new key from its envelope and
    sends again. Then a member leaves: the phone's next change finds the list awaiting a key,
    makes it (an editor may, then) and leaves it to the others, and the terminal follows."""
    title, bread, jam = unique("Familylist"), unique("Bread"), unique("Jam")
    alice, phone = encrypted_with_a_phone(client, device, title)
    carol, dan = device(unique("carol")), device(unique("dan"))
    for member in (carol, dan):
        member.run("join", alice.json("share")["code"])

    removed = alice.run("members", "rm", carol.name, "--yes").stdout
    assert "The list has a new key" in removed
    phone.add(bread)
    assert wait_until(lambda: synced_with(alice, bread)), phone.page.inner_text("body")[:500]
    assert alice.items() == {"Milk": False, bread: False}

    dan.run("leave", "--yes")
    phone.add(jam)
    assert wait_until(lambda: synced_with(alice, jam)), phone.page.inner_text("body")[:500]
    assert alice.items() == {"Milk": False, bread: False, jam: False}
    alice.run("add", "Tea")
    wait_until(lambda: "Tea" in phone.items())

    # Going shopping: the shop's name travels sealed, each side reads the other's.
    market, corner = unique("Secretmarket"), unique("Cornershop")
    alice.run("shopping", "start", "--at", market)
    phone.page.get_by_text(f"{alice.name} is shopping at {market} · since").wait_for()
    phone.page.get_by_role("button", name="I'm going shopping").click()
    dialog = phone.page.get_by_role("dialog", name="Going shopping")
    dialog.get_by_label("Shop (if you like)").fill(corner)
    dialog.get_by_role("button", name="Tell the others").click()
    phone.page.get_by_text(f"You are shopping at {corner} · since").wait_for()
    assert wait_until(lambda: f"is shopping at {corner}" in alice.run("shopping").stdout), alice.run("shopping").stdout
    stored = server_bytes(server)
    for word in (market, corner, bread, jam):
        assert word.encode() not in stored, f"{word} is in the server's files"
    assert phone.problems == []

    # A phone that joins now by link takes the earlier keys with the newest, and reads it all.
    code = alice.json("share")["code"]
    assert len(code) == 114 + 2 * 48, "two renewals: three epochs travel"
    newcomer = client()
    newcomer.signup(unique("erin"))
    newcomer.join_link(code)
    newcomer.page.wait_for_selector("#query")
    newcomer.wait_items({"Milk": False, bread: False, jam: False, "Tea": False})
    assert newcomer.problems == []


def test_a_forgotten_password_is_set_anew_on_the_phone_with_the_recovery_code(client, workspace, server):
    """The terminal's signup showed the recovery code; the password is forgotten. On a phone,
    "Forgot your password?" takes the code and a new password: the encrypted list opens, the
    terminal is signed out, and the new password signs in elsewhere. A wrong code changes nothing."""
    name, title, ring = unique("rosa"), unique("Giftlist"), unique("Ringbox")
    terminal = Device(os.path.join(workspace, f"cli-{name}"), server)
    terminal.run("remote", "set", server.url)
    signed_up = terminal.run("signup", name).stdout
    code = next(line for line in signed_up.splitlines() if line.startswith("Your recovery code: "))
    code = code[len("Your recovery code: "):].split(" ")[0]
    terminal.run("list", "new", title, "--encrypted")
    terminal.run("add", ring)
    terminal.run("sync")

    phone = client()
    phone.open()
    phone.page.get_by_role("button", name="Forgot your password?").click()
    phone.page.get_by_role("heading", name="Forgot your password?").wait_for()
    phone.page.get_by_label("Account name").fill(name)
    phone.page.get_by_label("Recovery code").fill(code[::-1])
    phone.page.get_by_label("New password (8 characters or more)").fill("a brand new password")
    phone.page.get_by_role("button", name="Set the new password").click()
    phone.page.get_by_role("alert").filter(has_text="recovery code").wait_for()
    assert terminal.run("sync", check=False).returncode == 0, "a wrong code changes nothing"

    phone.page.get_by_label("Recovery code").fill(code.lower())
    phone.page.get_by_role("button", name="Set the new password").click()
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    phone.page.get_by_role("link", name=f"{title} · encrypted").click()
    phone.wait_items({ring: False})
    assert terminal.run("sync", check=False).returncode != 0, "every other device is signed out"
    laptop = Device(os.path.join(workspace, f"cli-laptop-{unique('l')}"), server)
    laptop.run("remote", "set", server.url)
    laptop.run("login", name, env={"BASKET_PASSWORD": "a brand new password"})
    laptop.run("list", "use", title)
    assert laptop.items() == {ring: False}
    assert phone.problems == []


def test_a_push_names_an_encrypted_lists_new_item_from_its_sealed_name(client, device, server):
    """The server cannot read an encrypted list's add, yet its push message carries the name
    sealed as it was pushed: the phone's service worker opens it with the list's keys and names an
    item its copy does not have yet (the phone is offline)."""
    from test_together import notifications, service_worker_registration

    title, cake = unique("Familylist"), unique("Secretcake")
    alice, phone = encrypted_with_a_phone(client, device, title)
    phone.context.grant_permissions(["notifications"], origin=server.url)
    cdp = phone.context.new_cdp_session(phone.page)
    registration = service_worker_registration(phone, cdp)
    phone.context.set_offline(True)

    alice.run("add", cake)
    listing = alice.json("ls")
    list_id = listing["list"]["id"]
    item = next(i["id"] for i in listing["items"] if i["name"] == cake)
    with open(os.path.join(alice.home, "config.json")) as f:
        token = json.load(f)["token"]
    request = urllib.request.Request(f"{server.url}/v1/lists/{list_id}/ops?after=0", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        ops = json.load(answer)["ops"]
    # What the server put in the message: the item's name operation as pushed, sealed.
    lines = ops.split("\n")
    name = next(line for line in lines if line.startswith(item + "\tname\t"))
    assert cake not in ops
    message = {"v": 1, "list": list_id, "at": int(time.time() * 1000), "events": [
        {"kind": "added", "who": alice.name, "count": 1, "items": [item], "ops": f"{lines[0]}\n{lines[1]}\n{name}\n"}]}
    cdp.send("ServiceWorker.deliverPushMessage",
             {"origin": server.url, "registrationId": registration, "data": json.dumps(message)})
    shown = wait_until(lambda: notifications(phone), timeout=15)
    assert shown and shown[0]["body"] == f"{alice.name} added 1 item: {cake}", shown


def test_a_phone_joining_a_long_list_starts_from_its_snapshot_and_an_owners_phone_leaves_one(client, device, server):
    """A terminal's encrypted list past 2,000 operations: the owner's sync left a snapshot, and a
    phone joining by link opens it and pulls only the log after it (its requests show it), with
    every item there. Then a list the phone owns grows past 2,000 operations: the phone leaves a
    snapshot at its next sync, and a terminal joining it starts from it."""
    alice = device(unique("alice"))
    alice.run("list", "new", "Family")
    alice.run("add", ", ".join(f"Secret item {n}" for n in range(700)))
    alice.run("sync")
    list_id = alice.json("ls")["list"]["id"]
    alice.run("add", "Tail one")
    code = alice.json("share")["code"]

    phone = client()
    asked = []
    phone.page.on("request", lambda request: asked.append(request.url) if f"/v1/lists/{list_id}/" in request.url else None)
    phone.signup(unique("bob"))
    phone.join_link(code)
    phone.wait_status("Synced")
    # A long list draws its rows as they scroll in: found as a person finds one, by typing.
    for name in ["Tail one", "Secret item 699"]:
        phone.page.get_by_label("Add or find an item").fill(name)
        phone.page.get_by_role("list", name="Matches").get_by_role("checkbox", name=name).wait_for()
    phone.page.get_by_label("Add or find an item").fill("")
    pulls = [url for url in asked if "/ops?" in url]
    assert any(url.endswith("/snapshot") for url in asked), asked
    assert pulls and not any("after=0&" in url or url.endswith("after=0") for url in pulls), pulls

    # The phone's own list: 700 items, three registers each: its sync leaves a snapshot.
    put = []
    phone.page.on("request", lambda request: put.append(request.url) if request.method == "PUT" and request.url.endswith("/snapshot") else None)
    phone.page.get_by_role("link", name="All lists").click()
    phone.create_list("Party")
    phone.add(", ".join(f"Guest {n}" for n in range(700)))
    phone.page.get_by_label("Add or find an item").fill("Guest 699")
    phone.page.get_by_role("list", name="Matches").get_by_role("checkbox", name="Guest 699").wait_for()
    phone.page.get_by_label("Add or find an item").fill("")
    phone.wait_status("Synced")
    if not put:
        # The open list pulls its own writes back at its next long-poll; opening the app again
        # syncs every list at once. (Playwright hands events over during its own calls: waited
        # for with one, never by sleeping.)
        is_snapshot = lambda request: request.method == "PUT" and request.url.endswith("/snapshot")
        with phone.page.expect_request(is_snapshot, timeout=60000) as made:
            phone.page.reload()
        put.append(made.value.url)
    wait_until(lambda: phone.status().startswith("Synced"), timeout=15)
    party = put[0].split("/v1/lists/")[1].split("/")[0]
    terminal = device(unique("carol"))
    terminal.run("join", phone.share_code())
    assert "incomplete" in terminal.run("--list", "Party", "history", "Guest 5").stdout
    assert len(terminal.json("--list", "Party", "ls")["items"]) == 700
    assert party in terminal.run("lists").stdout
    assert phone.problems == []


def test_a_list_the_terminal_encrypts_is_never_misread_or_doubled_on_the_phone(client, device, server):
    """An owner encrypts a plain list in the terminal while a phone holds it as plain: the phone
    does not take the conversion yet. It must not read sealed values as names, nor send its copy
    under the new keys (the list would hold every item twice): its status line says it is not
    synced, and the list stays as it was everywhere."""
    title, cake = unique("Party"), unique("Cake")
    alice = device(unique("alice"))
    alice.run("list", "new", title, "--unencrypted")
    alice.run("add", f"{cake}, Candles")
    phone = client()
    phone.signup(unique("pip"))
    phone.join_link(alice.json("share")["code"])
    phone.page.wait_for_selector("#query")
    phone.wait_items({cake: False, "Candles": False})

    assert f"Encrypted {title} end to end" in alice.run("list", "encrypt").stdout
    alice.run("add", "Balloons")
    phone.page.reload()
    phone.page.wait_for_selector("#query")
    phone.wait_status("Not synced")
    phone.wait_items({cake: False, "Candles": False})
    alice.run("sync")
    assert sorted(alice.items()) == sorted([cake, "Candles", "Balloons"])
