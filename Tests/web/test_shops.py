"""Shops and usuals on a phone: choosing a shop walks the list in its order (items for other shops
one tap away), three trips turn the order, the Usuals view adds with one tap, and due usuals lead
what is offered while typing. A real basket-server, a CLI device whose clock stood at earlier
weeks (BASKET_CLOCK_MS), Chromium at 390×844; found by role and label as a person finds them."""
import time

from conftest import unique, wait_until

DAY = 86400000


def headings(phone):
    """The aisle headings of the open list, in order (the checked ones left out)."""
    texts = phone.page.locator("#items > :not(.off) h2.group").evaluate_all("hs => hs.map(h => h.textContent)")
    return [h for h in texts if not h.startswith("Checked")]


def test_a_shop_walk_turns_its_order_after_three_trips_and_the_usuals_add_with_one_tap(client, device):
    owner = device(unique("anna"))
    start = int(time.time() * 1000) - 30 * DAY
    at = lambda ms: {"BASKET_CLOCK_MS": str(ms)}
    owner.run("list", "new", "Family", env=at(start))
    # Milk bought every week for three weeks, at the terminal: a usual, due again since a week.
    for week in range(3):
        owner.run("add", "milk @dairy", env=at(start + week * 7 * DAY))
        owner.run("check", "milk", env=at(start + week * 7 * DAY + 1000))
    owner.run("add", "apples @fruit & vegetables, bread @bakery, cheese @dairy, butter @dairy", env=at(start + 15 * DAY))
    owner.run("shops", "add", "Lidl", env=at(start + 15 * DAY))
    owner.run("shops", "add", "Rewe", env=at(start + 15 * DAY))
    owner.run("aisles", "--shop", "Lidl", "set", "Bakery, Dairy & eggs, Fruit & vegetables", env=at(start + 15 * DAY))
    owner.run("set", "butter", "--shop", "Rewe", env=at(start + 15 * DAY))
    code = owner.json("share")["code"]
    phone = client()
    phone.name = unique("bob")
    phone.signup(phone.name)
    phone.join_link(code)
    phone.page.get_by_role("checkbox", name="Cheese").wait_for()
    phone.wait_status("Synced")

    # "I'm at Lidl": Lidl's order, butter (for Rewe) hidden, one tap shows it.
    phone.page.get_by_label("At shop").select_option(label="Lidl")
    assert wait_until(lambda: headings(phone) == ["Bakery", "Dairy & eggs", "Fruit & vegetables"]), headings(phone)
    assert wait_until(lambda: phone.page.get_by_role("checkbox", name="Butter").count() == 0)
    phone.page.get_by_role("button", name="Show 1 item for other shops").click()
    phone.page.get_by_role("checkbox", name="Butter").wait_for()
    phone.page.get_by_role("button", name="Hide the items for other shops").click()
    assert wait_until(lambda: phone.page.get_by_role("checkbox", name="Butter").count() == 0)

    # Three trips checking fruit off before cheese: the order turns after the third.
    for trip in range(3):
        if trip > 0:
            phone.page.get_by_label("At shop").select_option(label="Lidl")
        phone.page.get_by_role("checkbox", name="Apples").click()
        phone.page.get_by_role("checkbox", name="Cheese").click()
        assert wait_until(lambda: phone.items().get("apples") and phone.items().get("cheese")), phone.items()
        phone.page.get_by_role("button", name="Done at Lidl").click()
        phone.page.get_by_text(f"learned from {trip + 1} trip").first.wait_for()
        expected = ["Bakery", "Fruit & vegetables", "Dairy & eggs"] if trip == 2 else ["Bakery", "Dairy & eggs", "Fruit & vegetables"]
        phone.page.get_by_label("At shop").select_option(label="Lidl")
        # Back on the list to buy, for the next trip.
        for name in ["apples", "cheese"]:
            phone.page.get_by_label("Add or find an item").fill(name)
            phone.page.keyboard.press("Enter")
        assert wait_until(lambda: not phone.items().get("apples", True) and not phone.items().get("cheese", True)), phone.items()
        assert wait_until(lambda: headings(phone) == expected), (trip, headings(phone))
        phone.page.get_by_role("button", name="Done at Lidl").click()
    # The terminal walks Lidl in the order the phone's trips taught.
    walked = lambda: owner.run("sync") and owner.run("aisles", "--shop", "Lidl").stdout
    assert wait_until(lambda: "Bakery, Fruit & vegetables, Dairy & eggs" in walked() and "Learned from 3 trips" in walked()), walked()

    # An item's sheet at Lidl: bread bought at Rewe only (hidden here), and "wrong aisle?" for cheese.
    phone.page.get_by_label("At shop").select_option(label="Lidl")
    phone.page.get_by_role("button", name="Edit bread").click()
    sheet = phone.page.get_by_role("dialog", name="Edit bread")
    sheet.get_by_label("Rewe", exact=True).check()
    sheet.get_by_role("button", name="Save").click()
    assert wait_until(lambda: phone.page.get_by_role("checkbox", name="bread").count() == 0)
    phone.page.get_by_role("button", name="Show 2 items for other shops").wait_for()
    phone.page.get_by_role("button", name="Edit cheese").click()
    sheet = phone.page.get_by_role("dialog", name="Edit cheese")
    sheet.get_by_label("Aisle at Lidl").fill("Frozen")
    sheet.get_by_role("button", name="Save").click()
    assert wait_until(lambda: "Frozen" in headings(phone)), headings(phone)
    phone.page.get_by_role("button", name="Done at Lidl").click()
    # Without a shop the list is as before: bread back, cheese in its own aisle.
    phone.page.get_by_role("checkbox", name="bread").wait_for()
    assert wait_until(lambda: "Frozen" not in headings(phone) and "Dairy & eggs" in headings(phone)), headings(phone)

    # Milk is due: it leads the offers while typing, and the Usuals view adds it with one tap.
    phone.page.get_by_label("Add or find an item").fill("mi")
    offers = phone.page.locator(".offers button")
    assert wait_until(lambda: offers.count() > 1 and offers.nth(1).inner_text() == "+ milk (due)"), offers.all_inner_texts()
    phone.page.get_by_label("Add or find an item").fill("")
    phone.page.get_by_role("button", name="Usuals").click()
    sheet = phone.page.get_by_role("dialog", name="Usuals")
    sheet.get_by_text("milk — every week, due since").wait_for()
    sheet.get_by_role("button", name="Add milk").click()
    sheet.get_by_text("(on the list)").wait_for()
    sheet.get_by_role("button", name="Close").click()
    phone.page.get_by_role("checkbox", name="milk").wait_for()
    assert wait_until(lambda: "milk" in {i["name"] for i in owner.json("ls")["items"] if not i["checked"]})
