"""What the CLI can do with a list, done on the phone: edit an item, order the aisles,
share with the family, members and invites, clear checked, archive, leave, devices and password.
Each change is read back from a real CLI device (`basket … --json`)."""
import os
import time

from conftest import PASSWORD, Device, unique, wait_until


def family_list(client, device, title="Family"):
    """A phone that made a list, and a terminal that joined it."""
    phone = client()
    phone.name = unique("ada")
    phone.signup(phone.name)
    phone.create_list(title)
    terminal = device(unique("bo"))
    terminal.run("join", phone.share_code())
    return phone, terminal


def open_settings(phone):
    phone.page.get_by_role("button", name="List ⋯").click()
    return phone.page.get_by_role("dialog", name="This list")


def test_an_item_edited_on_the_phone_shows_its_quantity_note_and_category_in_the_cli(client, device):
    phone, terminal = family_list(client, device)
    phone.add("Birthday candles")
    phone.page.get_by_role("button", name="Edit Birthday candles").click()
    sheet = phone.page.get_by_role("dialog", name="Edit Birthday candles")
    sheet.get_by_label("Quantity").fill("2 packs")
    sheet.get_by_label("Note").fill("the blue ones")
    sheet.get_by_label("Category (aisle)").fill("Party")
    sheet.get_by_role("button", name="Save").click()
    phone.page.get_by_role("status").filter(has_text="Saved Birthday candles").wait_for()
    phone.wait_status("Synced")
    terminal.run("sync")
    item = next(i for i in terminal.json("ls")["items"] if i["name"] == "Birthday candles")
    assert (item["quantity"], item["note"], item["category"]) == ("2 packs", "the blue ones", "Party"), item
    # The history has every write, as `basket history`: the terminal sets another quantity, and
    # after a reload the sheet shows both, the winner marked, who wrote each and why one lost.
    terminal.run("set", "Birthday candles", "--quantity", "3 packs")
    terminal.run("sync")
    phone.page.wait_for_selector("li.item:has-text('3 packs')")
    phone.page.reload()
    phone.page.get_by_role("button", name="Edit 3 packs Birthday candles").click()
    sheet = phone.page.get_by_role("dialog", name="Edit Birthday candles")
    sheet.get_by_text("History").click()
    quantity = sheet.locator("section").filter(has=phone.page.get_by_role("heading", name="Quantity", exact=True))
    quantity.get_by_role("listitem").first.wait_for()
    writes = quantity.get_by_role("listitem").all_inner_texts()
    assert len(writes) == 2, writes
    assert writes[0].startswith("✓ 3 packs") and writes[0].endswith("another device"), writes
    assert writes[1].startswith("2 packs") and "this device" in writes[1] and "superseded by the later write" in writes[1], writes
    sheet.get_by_role("button", name="Close").click()
    # A rename onto another key moves the item.
    phone.page.get_by_role("button", name="Edit 3 packs Birthday candles").click()
    sheet = phone.page.get_by_role("dialog", name="Edit Birthday candles")
    sheet.get_by_label("Name").fill("Candles")
    sheet.get_by_role("button", name="Save").click()
    phone.page.wait_for_selector("li.item:has-text('Candles')")
    phone.wait_status("Synced")
    terminal.run("sync")
    assert [i["name"] for i in terminal.json("ls")["items"]] == ["Candles"]


def test_an_aisle_order_set_on_the_phone_groups_basket_ls(client, device):
    phone, terminal = family_list(client, device)
    phone.add("milk, bananas, bread")  # the catalogue's aisles: dairy, produce, bakery
    phone.page.wait_for_selector("li.item:has-text('bread')")
    open_settings(phone).get_by_role("button", name="Aisle order").click()
    sheet = phone.page.get_by_role("dialog", name="Aisle order")
    order = lambda: [li.inner_text().split("\n")[0] for li in sheet.locator("ol.aisles li").all()]
    assert sorted(order()) == ["Bakery", "Dairy & eggs", "Fruit & vegetables"]
    # Walk the shop: bread first, then fruit, then dairy.
    while order()[0] != "Bakery":
        sheet.get_by_role("button", name="Move Bakery up").click()
    while order()[1] != "Fruit & vegetables":
        sheet.get_by_role("button", name="Move Fruit & vegetables up").click()
    with phone.sent():
        sheet.get_by_role("button", name="Save the order").click()
    phone.wait_status("Synced")
    terminal.run("sync")
    terminal.run("ls")  # what the phone added is new here once ("… added 3 items"), then no longer
    headings = [line for line in terminal.run("ls").stdout.splitlines()[1:] if not line.startswith(" ")]
    assert headings == ["Bakery", "Fruit & vegetables", "Dairy & eggs"], headings
    # The phone walks the same order.
    groups = [h.text_content() for h in phone.page.locator("#items h2.group").all()]
    assert groups == ["Bakery", "Fruit & vegetables", "Dairy & eggs"], groups


def test_one_share_link_joins_two_more_people_and_its_invite_can_be_withdrawn(client, device):
    phone = client()
    phone.signup(unique("cleo"))
    phone.create_list("Family")
    phone.add("Milk")
    code = phone.share_code(people="5 people")
    for person in ("dan", "eve"):
        other = client()
        other.signup(unique(person))
        question = other.join_link(code)
        assert "invited you to the list “Family” as an editor" in question
        other.page.wait_for_selector("li.item:has-text('Milk')")
    # The owner sees three members and the invite with 3 uses left; withdrawn, it stops working.
    open_settings(phone).get_by_role("button", name="Members and invites").click()
    sheet = phone.page.get_by_role("dialog", name="Members and invites")
    sheet.get_by_role("list", name="Members").locator("li").nth(2).wait_for()
    assert sheet.get_by_role("list", name="Members").locator("li").count() == 3
    assert "3 uses left" in sheet.get_by_role("list", name="Invites").inner_text()
    sheet.get_by_role("button", name="Withdraw the editor invite").click()
    phone.page.get_by_role("status").filter(has_text="Withdrew the invite").wait_for()
    late = client()
    late.signup(unique("fay"))
    late.page.goto(f"{late.server.url}/#join={code}")
    late.page.locator("#toast").filter(has_text="invite").wait_for(timeout=10000)
    assert late.page.get_by_role("dialog", name="Join this list?").count() == 0


def test_an_owner_removes_a_member_with_the_items_they_added_and_can_undo_it(client, device, workspace, server):
    """An owner's way out of a list a member filled with junk, as `basket members rm
    NAME --remove-their-items-since TIME` does it: the member goes, so do the items they added
    since the chosen time, what the owner added stays, and one Undo brings the items back."""
    phone, terminal = family_list(client, device)
    with phone.sent():
        phone.add("Milk")
    phone.wait_status("Synced")
    terminal.run("sync")
    terminal.run("add", "Junk one, Junk two, Junk three")
    terminal.run("sync")
    phone.wait_items({"Milk": False, "Junk one": False, "Junk two": False, "Junk three": False})
    open_settings(phone).get_by_role("button", name="Members and invites").click()
    sheet = phone.page.get_by_role("dialog", name="Members and invites")
    sheet.get_by_role("button", name=f"Remove {terminal.name}").click()
    form = sheet.get_by_role("form", name=f"Remove {terminal.name}")
    assert form.get_by_label("Added since").is_disabled()
    form.get_by_label("Also remove the items they added").check()
    form.get_by_label("Added since").select_option(label="the last hour")
    form.get_by_role("button", name=f"Remove {terminal.name}").click()
    phone.page.get_by_role("status").filter(has_text=f"Removed {terminal.name} and the 3 items they added since").wait_for()
    phone.wait_items({"Milk": False})
    # The sheet again, with one member left; the removed member's device is told.
    members = phone.page.get_by_role("dialog", name="Members and invites").get_by_role("list", name="Members")
    members.get_by_text(f"{phone.name} (you)").wait_for()
    assert members.locator("li").count() == 1
    assert "You are no longer a member of Family" in terminal.run("sync").stderr
    # The owner's other device reads the same list from the server.
    phone.page.get_by_role("dialog", name="Members and invites").get_by_role("button", name="Close").click()
    phone.wait_status("Synced")
    laptop = Device(os.path.join(workspace, f"cli-laptop-{time.time_ns()}"), server)
    laptop.run("remote", "set", server.url)
    laptop.run("login", phone.name)
    laptop.run("sync")
    assert laptop.items() == {"Milk": False}
    # One Undo (Ctrl+Z here: the toast may be gone) brings the three back, on every device.
    phone.page.keyboard.press("Control+z")
    phone.wait_items({"Milk": False, "Junk one": False, "Junk two": False, "Junk three": False})
    phone.wait_status("Synced")
    laptop.run("sync")
    assert laptop.items() == {"Milk": False, "Junk one": False, "Junk two": False, "Junk three": False}


def test_a_member_made_a_viewer_on_the_phone_cannot_change_the_list(client, device):
    phone, terminal = family_list(client, device)
    phone.add("Tea")
    open_settings(phone).get_by_role("button", name="Members and invites").click()
    sheet = phone.page.get_by_role("dialog", name="Members and invites")
    sheet.get_by_label(f"Role of {terminal.name}").select_option("viewer")
    phone.page.get_by_role("status").filter(has_text=f"{terminal.name} is now a viewer").wait_for()
    terminal.run("sync")
    refused = terminal.run("add", "Coffee", check=False)
    assert refused.returncode != 0 and "view" in refused.stderr


def test_clear_checked_archive_and_delete_from_the_phone(client, device):
    phone, terminal = family_list(client, device)
    phone.add("Milk, Bread, Eggs")
    phone.page.wait_for_selector("li.item:has-text('Eggs')")
    for name in ("Milk", "Bread"):
        phone.page.get_by_role("checkbox", name=name).click()
        phone.page.wait_for_selector(f"li.item.checked:has-text('{name}')")
    open_settings(phone).get_by_role("button", name="Clear checked (2)").click()
    phone.page.get_by_role("status").filter(has_text="Cleared 2 checked items").wait_for()
    phone.wait_items({"Eggs": False})
    # One undo brings both back.
    phone.page.locator("#toast").get_by_role("button", name="Undo").click()
    assert wait_until(lambda: phone.items() == {"Eggs": False, "Milk": True, "Bread": True})
    open_settings(phone).get_by_role("button", name="Archive").click()
    phone.page.get_by_text("This list is archived: read-only.").wait_for()
    assert phone.page.is_disabled("#query")
    phone.wait_status("Synced")
    terminal.run("sync")
    assert terminal.json("lists", "--all")["lists"]  # still there
    refused = terminal.run("add", "Jam", check=False)
    assert refused.returncode != 0
    open_settings(phone).get_by_role("button", name="Delete the list").click()
    phone.page.get_by_role("dialog", name="Delete Family?").get_by_role("button", name="Delete").click()
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    # Said, with no Undo: a deleted list cannot come back.
    toast = phone.page.get_by_role("status").filter(has_text="Deleted Family")
    toast.wait_for()
    assert toast.get_by_role("button", name="Undo").count() == 0
    assert phone.page.query_selector("a.list-row:has-text('Family')") is None
    terminal.run("sync", check=False)
    status = terminal.json("status")["lists"]
    assert [entry["noLongerMember"] for entry in status if entry["title"] == "Family"] == [True], status


def test_leaving_a_list_on_the_phone_keeps_it_read_only(client, device):
    owner = device(unique("gus"))
    owner.run("list", "new", "Party")
    owner.run("add", "Crisps")
    code = owner.run("share").stdout.split(": ")[1].split()[0]
    phone = client()
    name = unique("hal")
    phone.signup(name)
    phone.join_link(code)
    phone.page.wait_for_selector("li.item:has-text('Crisps')")
    open_settings(phone).get_by_role("button", name="Leave the list").click()
    phone.page.get_by_role("dialog", name="Leave this list?").get_by_role("button", name="Leave").click()
    phone.page.get_by_text("no longer shared with you").wait_for(timeout=10000)
    assert name not in owner.run("members").stdout


def test_devices_and_password_on_the_phone(client):
    phone = client()
    name = unique("ida")
    phone.signup(name)
    other = client()
    other.open()
    other.signin(name)
    other.page.get_by_role("heading", name="Your lists").wait_for()
    phone.page.get_by_role("button", name=f"Account {name}").click()
    sheet = phone.page.get_by_role("dialog", name=f"Account {name}")
    devices = sheet.get_by_role("list", name="Devices")
    devices.locator("li").nth(1).wait_for()
    assert devices.locator("li").count() == 2 and "(this one)" in devices.inner_text()
    sheet.get_by_role("button", name="Close").click()
    phone.change_password(name, PASSWORD, "a new long password")
    # The other browser is signed out at its next request.
    other.page.reload()
    other.page.wait_for_selector("html[data-ready=true]")
    other.wait_status("Signed out", timeout=15000)


def test_scopes_show_to_buy_checked_or_one_aisle_like_the_clis_ctrl_s(client, device):
    phone, terminal = family_list(client, device)
    phone.add("milk, bananas, bread, cheese")
    phone.page.wait_for_selector("li.item:has-text('cheese')")
    phone.page.get_by_role("checkbox", name="bread").click()
    phone.page.wait_for_selector("li.item.checked:has-text('bread')")
    show = phone.page.get_by_label("Show")
    show.select_option(label="Checked")
    assert wait_until(lambda: phone.items() == {"bread": True})
    show.select_option(label="To buy")
    assert wait_until(lambda: phone.items() == {"milk": False, "bananas": False, "cheese": False})
    show.select_option(label="Dairy & eggs")
    assert wait_until(lambda: phone.items() == {"milk": False, "cheese": False})
    # Typing narrows within the scope.
    phone.page.fill("#query", "che")
    assert wait_until(lambda: phone.page.locator("#items > :not(.off) li.item .name").all_text_contents() == ["cheese"])
    phone.page.fill("#query", "")
    show.select_option(label="Everything")
    assert wait_until(lambda: len(phone.items()) == 4)


def test_an_account_is_deleted_from_its_sheet_as_the_cli_deletes_it(client, device):
    """The account sheet deletes the account (the CLI's `basket delete-account`): a wrong password
    deletes nothing; the right one says what became of the lists, "Done" leaves for the sign-in
    screen, and the account is gone for every device."""
    phone = client()
    name = unique("jana")
    phone.signup(name)
    phone.create_list("Mine")
    phone.add("Secret")
    phone.page.wait_for_selector("li.item:has-text('Secret')")
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    phone.page.get_by_role("button", name=f"Account {name}").click()
    sheet = phone.page.get_by_role("dialog", name=f"Account {name}")
    sheet.get_by_label("Password, to delete the account").fill("not the password")
    sheet.get_by_role("button", name="Delete my account").click()
    sheet.get_by_text("name or password").wait_for()
    sheet.get_by_label("Password, to delete the account").fill(PASSWORD)
    sheet.get_by_role("button", name="Delete my account").click()
    sheet.get_by_text("The account is deleted: 1 list deleted").wait_for()
    sheet.get_by_role("button", name="Done").click()
    phone.page.get_by_role("heading", name="Sign in").wait_for()
    terminal = device(unique("kim"))
    attempt = terminal.run("login", name, check=False)
    assert attempt.returncode != 0, attempt.stdout
