"""The web client in Chromium through nginx with TLS (run by Scripts/nginx-check.sh): a new account,
a list and an item, synced over https. The self-signed certificate is accepted for this one
browser context only.

    behind_proxy.py https://localhost:PORT PORT
"""
import sys
import time

from playwright.sync_api import sync_playwright

base, port = sys.argv[1], sys.argv[2]
problems = []
with sync_playwright() as p:
    browser = p.chromium.launch(
        executable_path="/usr/bin/chromium",
        args=["--no-sandbox", f"--host-resolver-rules=MAP localhost:{port} 127.0.0.1:{port}"])
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(base + "/")
    page.wait_for_selector("#name")
    name = f"proxy{int(time.time() * 1000) % 100000000}"
    page.get_by_role("button", name="Create an account").click()
    page.get_by_label("Account name").fill(name)
    page.get_by_label("Choose a password").fill("correct horse battery")
    page.get_by_role("button", name="Create account").click()
    # The recovery code, shown once, closed as a person does once it is written down.
    recovery = page.get_by_role("dialog", name="Your recovery code")
    recovery.get_by_role("button", name="Close").click()
    page.fill("#new-list", "Through nginx")
    page.press("#new-list", "Enter")
    page.fill("#query", "Milk over TLS")
    page.press("#query", "Enter")
    page.wait_for_selector("li.item:has-text('Milk over TLS')")
    # Polled from here: a string predicate would be compiled in the page, which its policy forbids.
    deadline = time.time() + 15
    while page.inner_text("#status") != "Synced" and time.time() < deadline:
        time.sleep(0.1)
    if page.inner_text("#status") != "Synced":
        problems.append("the status line says " + page.inner_text("#status"))
    browser.close()
api = [url for url in requests if "/v1/" in url]
if problems or not api or not all(url.startswith("https://") for url in api):
    sys.exit(f"behind_proxy: problems {problems}, API requests {api[:5]}")
print(f"web client through nginx: signed up, made a list and synced an item over TLS ({len(api)} API requests)")
