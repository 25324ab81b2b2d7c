"""The phone in the shop (issue 28): nothing waiting is lost, the status says what is true, the
app catches up quickly after an outage, a skewed clock is corrected, undo stays on its list.
Real basket-server processes, real CLI devices, Chromium at 390×844; found by role and label."""
import os
import time

from conftest import Client, Device, Server, unique, wait_until


def read_store(page, name):
    """Every record of one IndexedDB object store of the page."""
    return page.evaluate(
        """(name) => new Promise((resolve, reject) => {
            const open = indexedDB.open("basket");
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
                const get = open.result.transaction(name).objectStore(name).getAll();
                get.onsuccess = () => resolve(get.result);
                get.onerror = () => reject(get.error);
            };
        })""", name)


def test_signing_out_offline_keeps_the_change_and_it_reaches_the_terminal_later(client, device):
    terminal = device(unique("ines"))
    terminal.run("list", "new", "Family")
    terminal.run("add", "Milk")
    code = terminal.run("share").stdout.split(": ")[1].split()[0]
    phone = client()
    name = unique("jon")
    phone.signup(name)
    phone.join_link(code)
    phone.page.wait_for_selector("li.item:has-text('Milk')")
    phone.wait_status("Synced")

    phone.context.set_offline(True)
    phone.add("Batteries")
    phone.page.wait_for_selector("li.item:has-text('Batteries')")
    phone.wait_status("Offline · 1 change waiting")
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.get_by_role("button", name="Sign out").click()
    dialog = phone.page.get_by_role("dialog", name="Sign out?")
    dialog.wait_for()
    assert "1 change on this device has not reached the server yet." in dialog.inner_text()
    assert dialog.get_by_role("button", name="Discard 1 change and sign out").is_visible()
    # Sending needs the server: offline, the dialog says so and nothing is signed out.
    dialog.get_by_role("button", name="Send them, then sign out").click()
    dialog.get_by_role("alert").filter(has_text="Can't reach the server").wait_for()
    dialog.get_by_role("button", name="Sign out, keep them on this device").click()
    phone.page.get_by_role("heading", name="Sign in").wait_for()
    assert f"1 change of {name} wait on this device" in phone.page.inner_text("main")

    # Another account may not sign in over the change: it names whose it is.
    phone.page.get_by_label("Account name").fill(unique("kate"))
    phone.page.get_by_label("Password").fill("whatever password")
    phone.page.get_by_role("button", name="Sign in", exact=True).click()
    phone.page.get_by_role("alert").filter(has_text=f"Sign in as {name} to send them").wait_for()

    phone.context.set_offline(False)
    phone.signin(name)
    phone.page.get_by_role("heading", name="Your lists").wait_for()
    phone.wait_status("Synced", timeout=20000)
    terminal.run("sync")
    assert terminal.items() == {"Milk": False, "Batteries": False}


def test_after_a_minute_of_outage_the_phone_catches_up_within_five_seconds(browser, workspace):
    """The server goes down for a minute: the phone says it cannot reach the server (it is not
    offline), and another device's change made when the server is back shows within 5 s."""
    directory = os.path.join(workspace, f"outage-{time.time_ns()}")
    os.makedirs(directory)
    server = Server(directory)
    phone = None
    try:
        terminal = Device(os.path.join(directory, "cli"), server)
        terminal.run("remote", "set", server.url)
        terminal.run("signup", unique("lena"))
        terminal.run("list", "new", "Outage")
        terminal.run("add", "Milk")
        code = terminal.run("share").stdout.split(": ")[1].split()[0]
        phone = Client(browser, server)
        phone.signup(unique("max"))
        phone.join_link(code)
        phone.page.wait_for_selector("li.item:has-text('Milk')")
        phone.wait_status("Synced")

        server.stop()
        down = time.time()
        phone.wait_status("Can't reach the server", timeout=10000)
        phone.add("Eggs")
        phone.wait_status("Can't reach the server · 1 change waiting", timeout=10000)
        time.sleep(max(0.0, 60 - (time.time() - down)))
        assert phone.status().startswith("Can't reach the server")

        server.start()
        back = time.time()
        terminal.run("add", "Bread")
        assert wait_until(lambda: "Bread" in phone.items(), timeout=10, interval=0.05)
        seen = time.time() - back
        assert seen <= 5, f"the phone showed the change {seen:.1f} s after the server came back"
        phone.wait_status("Synced", timeout=5000)
        terminal.run("sync")
        assert terminal.items() == {"Milk": False, "Eggs": False, "Bread": False}
        assert phone.problems == [], phone.problems
    finally:
        if phone is not None:
            phone.close()
        server.stop()


def test_a_phone_an_hour_ahead_gets_its_writes_accepted_after_one_correction(client, device):
    phone = client()
    # The phone's clock reads an hour late... ahead: every write it stamps is an hour in the future.
    phone.context.clock.install(time=time.time() + 3600)
    phone.signup(unique("nora"))
    phone.create_list("Ahead")
    phone.add("Milk")
    phone.page.wait_for_selector("li.item:has-text('Milk')")
    phone.wait_status("Synced", timeout=20000)
    assert read_store(phone.page, "outbox") == []
    now = time.time() * 1000
    stamps = [int(r["ts"][:12], 16) for r in read_store(phone.page, "registers")]
    # Every register holds a stamp from the corrected clock: none an hour ahead.
    assert stamps and all(abs(ms - now) < 5 * 60 * 1000 for ms in stamps), [ms - now for ms in stamps]
    # A later write is stamped by the corrected clock, and is accepted at once.
    phone.page.click("li.item:has-text('Milk') button.check")
    phone.wait_status("Synced", timeout=10000)
    assert read_store(phone.page, "outbox") == []
    code = phone.share_code()
    terminal = device(unique("otto"))
    terminal.run("join", code)
    assert terminal.items() == {"Milk": True}


def test_undo_goes_back_step_by_step_and_never_on_another_list(client):
    phone = client()
    phone.signup(unique("pia"))
    phone.create_list("Home")
    phone.add("bread")
    phone.page.get_by_role("status").filter(has_text="Added bread").wait_for()
    phone.add("bread x3")
    phone.page.get_by_role("status").filter(has_text="bread: quantity now 3").wait_for()
    phone.add("bread")
    phone.page.get_by_role("status").filter(has_text="bread is already on the list").wait_for()
    phone.page.get_by_role("checkbox", name="bread").click()
    toast = phone.page.locator("#toast")
    toast.filter(has_text="Checked bread").wait_for()
    assert toast.get_by_role("button", name="Undo").is_visible()

    # Another list: the toast (and its Undo) is gone, and Ctrl+Z there finds nothing to undo.
    phone.page.get_by_role("link", name="All lists").click()
    assert phone.page.locator("#toast").count() == 0
    phone.create_list("Work")
    phone.page.locator("body").press("Control+z")
    toast.filter(has_text="Nothing to undo").wait_for()
    phone.page.get_by_role("link", name="All lists").click()
    phone.page.get_by_role("link", name="Home").click()
    phone.page.wait_for_selector("li.item.checked:has-text('bread')")

    # On Home, each Ctrl+Z undoes one step, newest first.
    phone.page.locator("body").press("Control+z")
    toast.filter(has_text="Undid: Checked bread").wait_for()
    phone.page.wait_for_selector("li.item:not(.checked):has-text('bread')")
    phone.page.locator("body").press("Control+z")  # "already on the list": no value changed
    toast.filter(has_text="Undid: bread is already on the list").wait_for()
    phone.page.locator("body").press("Control+z")
    toast.filter(has_text="Undid: bread: quantity now 3").wait_for()
    assert wait_until(lambda: phone.page.locator("li.item:has-text('bread') .quantity").count() == 0)
    toast.get_by_role("button", name="Undo").click()
    toast.filter(has_text="Undid: Added bread").wait_for()
    assert wait_until(lambda: phone.items() == {})
    phone.page.locator("body").press("Control+z")
    toast.filter(has_text="Nothing to undo").wait_for()
