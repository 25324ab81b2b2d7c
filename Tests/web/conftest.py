"""Fixtures of the web client's tests: a real basket-server on 127.0.0.1 serving Client/web,
Debian's Chromium driven by Playwright, and CLI devices (the real `basket` executable).

    Scripts/web-test.sh            installs what is missing and runs these tests
"""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from urllib.parse import urlparse

import pytest
from playwright.sync_api import sync_playwright

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BASKET_BUILD", os.path.join(ROOT, ".build", "debug"))
CHROMIUM = os.environ.get("BASKET_CHROMIUM", "/usr/bin/chromium")
PASSWORD = "correct horse battery"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, directory, port=None, args=()):
        self.directory = directory
        self.args = list(args)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.starts = 0
        self.start()

    def start(self):
        """Starts basket-server (again, after stop(): same port, same data)."""
        # Every browser and CLI device of the session signs up from 127.0.0.1: more than the 20 a
        # minute one address may.
        env = dict(os.environ, BASKET_PASSWORD_ITERATIONS="10000", BASKET_CONNECTIONS_PER_ADDRESS="0", BASKET_QUIET="1",
                   BASKET_SIGN_INS_PER_ADDRESS="1000", BASKET_PUBLIC_METRICS="1")
        self.starts += 1
        self.log = open(os.path.join(self.directory, f"server-{self.starts}.log"), "w+")
        self.process = subprocess.Popen(
            [os.path.join(BUILD, "basket-server"), "--listen", f"127.0.0.1:{self.port}", "--data",
             os.path.join(self.directory, "data"), "--web", os.path.join(ROOT, "Client", "web"), *self.args],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        deadline = time.time() + 20
        while time.time() < deadline:
            self.log.seek(0)
            if "listening on" in self.log.read():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.log.seek(0)
        raise RuntimeError("basket-server did not start: " + self.log.read())

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Device:
    """A CLI device: its own replica folder, signed in to the server."""

    def __init__(self, directory, server):
        self.home = directory
        self.server = server

    def run(self, *args, stdin=None, check=True, env=None):
        result = subprocess.run(
            [os.path.join(BUILD, "basket"), "--db", self.home, *args], input=stdin, capture_output=True, text=True,
            timeout=60, env={**os.environ, "NO_COLOR": "1", "BASKET_PASSWORD": PASSWORD, **(env or {})})
        if check and result.returncode != 0:
            raise AssertionError(f"basket {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def json(self, *args):
        return json.loads(self.run("--json", *args).stdout)

    def items(self):
        """{name: checked} of the current list, as `basket ls --json` shows it."""
        return {i["name"]: i["checked"] for i in self.json("ls")["items"]}


@pytest.fixture(scope="session")
def workspace():
    directory = tempfile.mkdtemp(prefix="basket-web-")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def server(workspace):
    server = Server(workspace)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def device(workspace, server):
    counter = {"n": 0}

    def make(name):
        counter["n"] += 1
        home = os.path.join(workspace, f"cli-{name}-{time.time_ns()}")
        d = Device(home, server)
        d.name = name
        d.run("remote", "set", server.url)
        d.run("signup", name)
        return d

    return make


_names = iter(range(1, 1_000_000))


def unique(prefix):
    return f"{prefix}{next(_names)}{os.getpid() % 1000}"


class Client:
    """One browser context (a phone) on the web client, with every page error and CSP report kept."""

    def __init__(self, browser, server, **options):
        self.server = server
        self.context = browser.new_context(**{"viewport": {"width": 390, "height": 844}, **options})
        self.page = self.context.new_page()
        self.problems = []
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("console", self._console)
        self.page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))

    def _console(self, message):
        if message.type == "error" or "Content Security Policy" in message.text:
            # An offline page's failed requests are expected; anything else is a problem.
            # The browser also reports every error answer of a request (a 404 once the list is gone,
            # a 401 for a wrong password): the tests check what the page does with them.
            expected = ("net::ERR_INTERNET_DISCONNECTED", "Failed to fetch", "Failed to load resource")
            if not any(text in message.text for text in expected):
                self.problems.append(f"console {message.type}: {message.text}")

    def open(self, path="/"):
        self.page.goto(self.server.url + path)
        self.page.wait_for_selector("html[data-ready=true]")

    def signup(self, name):
        """Creates an account as a new person does: "Create an account", then the form."""
        self.open()
        self.page.get_by_role("button", name="Create an account").click()
        self.page.get_by_role("heading", name="Create an account").wait_for()
        self.page.get_by_label("Account name").fill(name)
        self.page.get_by_label("Choose a password").fill(PASSWORD)
        self.page.get_by_label("Choose a password").press("Enter")
        # The account's recovery code, shown once: kept (`recovery_code`), then closed.
        dialog = self.page.get_by_role("dialog", name="Your recovery code")
        self.recovery_code = dialog.get_by_label("Recovery code").inner_text()
        dialog.get_by_role("button", name="Close").click()
        # Gone from the page (its role goes at once; the element, and the focus back to the
        # screen, with the close event).
        self.page.wait_for_function("() => document.querySelector('dialog') === null")
        self.page.wait_for_selector("#new-list")

    def signin(self, name):
        """Signs in to an account that exists (the screen a device opens on)."""
        self.page.get_by_role("heading", name="Sign in").wait_for()
        self.page.get_by_label("Account name").fill(name)
        self.page.get_by_label("Password").fill(PASSWORD)
        self.page.get_by_role("button", name="Sign in", exact=True).click()

    def change_password(self, name, current, new):
        """Changes the password in the account sheet, as a person does; returns the sheet."""
        self.page.get_by_role("button", name=f"Account {name}").click()
        sheet = self.page.get_by_role("dialog", name=f"Account {name}")
        sheet.get_by_label("Current password").fill(current)
        sheet.get_by_label("New password").fill(new)
        sheet.get_by_role("button", name="Change the password").click()
        sheet.get_by_text("other device(s) signed out").wait_for()
        return sheet

    def create_list(self, title):
        self.page.fill("#new-list", title)
        self.page.press("#new-list", "Enter")
        self.page.wait_for_selector("#query")
        self.wait_status("Synced")

    def add(self, text):
        self.page.fill("#query", text)
        self.page.press("#query", "Enter")

    def items(self):
        """{name: checked} of the open list, as the page shows it (removed ones are not shown; the
        page keeps the whole list and the matches both, the one not shown hidden as `.off`)."""
        if not self.page.is_disabled("#query"):
            self.page.fill("#query", "")
        return self.page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('#items > :not(.off) li.item')].map(li =>
                [li.querySelector('.name').textContent, li.classList.contains('checked')]))""")

    def wait_items(self, expected, timeout=15):
        """Waits until the open list shows exactly `expected` ({name: checked}), then returns; fails
        with what it shows. A status message or a click is answered before the list is drawn again,
        so a test reads the list through this, never straight after an action."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.items() == expected:
                return
            time.sleep(0.05)
        assert self.items() == expected, f"the list shows {self.items()!r}, not {expected!r}"

    def share_code(self, people=None, role=None):
        """Makes an invite link as a person does: Share, the choices, "Make a link"."""
        self.page.get_by_role("button", name="Share", exact=True).click()
        dialog = self.page.get_by_role("dialog", name="Share this list")
        if people is not None:
            dialog.get_by_label("Works for").select_option(label=people)
        if role is not None:
            dialog.get_by_label("They").select_option(value=role)
        dialog.get_by_role("button", name="Make a link").click()
        dialog.locator("#invite-code").wait_for()
        code = dialog.locator("#invite-code").inner_text()
        dialog.get_by_role("button", name="Close").click()
        return code

    def join_link(self, code, answer="Join"):
        """Opens an invite link as a person would, and answers the question it asks."""
        self.page.goto(f"{self.server.url}/#join={code}")
        dialog = self.page.get_by_role("dialog", name="Join this list?")
        dialog.wait_for()
        question = dialog.locator("#join-question").inner_text()
        dialog.get_by_role("button", name=answer).click()
        return question

    def sent(self):
        """Wraps an action that writes: the block ends once a push of the list's operations was
        answered. The status line still says "Synced" from before until the action's handler has
        stored its write, so waiting for "Synced" alone can return before the write left."""
        return self.page.expect_response(
            lambda r: r.request.method == "POST" and urlparse(r.url).path.endswith("/ops")
            and urlparse(r.url).path.startswith("/v1/lists/"))

    def status(self):
        return self.page.inner_text("#status")

    def wait_status(self, text, timeout=15000):
        # Polled from here: a predicate compiled in the page would need 'unsafe-eval'.
        deadline = time.time() + timeout / 1000
        while time.time() < deadline:
            if self.status().startswith(text):
                return
            time.sleep(0.05)
        assert self.status().startswith(text), f"the status line says {self.status()!r}, not {text!r}"

    def close(self):
        self.context.close()


@pytest.fixture
def client(browser, server):
    made = []

    def make(**options):
        c = Client(browser, server, **options)
        made.append(c)
        return c

    yield make
    for c in made:
        problems = c.problems
        c.close()
        assert problems == [], problems


# The contrast ratio of two colours as WCAG defines it, for a script evaluated in the page:
# `rgb(cssColor)` → [r, g, b], `ratio(a, b)` → 1 to 21.
CONTRAST_RATIO = """
  const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (x, y) => {
    const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p);
    return (a + 0.05) / (b + 0.05);
  };
"""


def wait_until(condition, timeout=15, interval=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return condition()


def version_of(page):
    return page.get_attribute("meta[name=basket-version]", "content")


def strip(text):
    return re.sub(r"\s+", " ", text).strip()
