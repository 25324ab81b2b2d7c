"""The picture of a run: `basket-lab run --trace` (the conflict lab) draws scenarios/three-devices-converge.scenario as
one HTML file, opened here in Chromium as a person would and checked against the run: a lane per
device and the server, the pushes and pulls of its syncs, the offline stretches, the registers
written concurrently with who won and why, and each device's final list."""
import os
import re
import subprocess

from conftest import BUILD, ROOT


def run_traced(workspace, scenario, plant=None):
    out = os.path.join(workspace, os.path.basename(scenario) + ".html")
    env = dict(os.environ, BASKET_PLANTED_RULE=plant or "")
    result = subprocess.run(
        [os.path.join(BUILD, "basket-lab"), "run", "--trace", out, scenario],
        capture_output=True, text=True, timeout=300, env=env)
    return result, out


def test_the_trace_of_three_devices_shows_lanes_arrows_winners_and_lists(browser, workspace):
    scenario = os.path.join(ROOT, "scenarios", "three-devices-converge.scenario")
    result, path = run_traced(workspace, scenario)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "trace written to" in result.stdout
    html = open(path, encoding="utf-8").read()
    # Self-contained: no script, nothing fetched.
    assert "<script" not in html and not re.search(r'(src|href)="https?:', html)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto("file://" + path)
    picture = page.get_by_role("img", name=re.compile("Run of three-devices-converge.scenario"))
    assert picture.is_visible()
    # A lane for each device the scenario names, and the server's.
    for lane in ["alice", "bob", "carol", "server"]:
        assert page.get_by_role("group", name=f"lane {lane}").count() == 1
    assert page.get_by_role("group", name=re.compile("^lane ")).count() == 4

    # The syncs: alice's first sync pushes her two adds; after the devices come back online each
    # pushes its offline edits and pulls the others'.
    assert page.get_by_role("img", name=re.compile(r"^alice pushes \d+ writes? to the server")).count() >= 2
    for device in ["bob", "carol"]:
        assert page.get_by_role("img", name=re.compile(f"^{device} pushes \\d+ writes? to the server")).count() >= 1
        assert page.get_by_role("img", name=re.compile(f"^{device} pulls \\d+ writes? from the server")).count() >= 1
    # The three devices were offline together (steps 3–5 to 10–12).
    for device in ["alice", "bob", "carol"]:
        assert page.get_by_role("img", name=re.compile(f"^{device} offline, steps")).count() == 1
    # Each write is a mark with its field, value and timestamp.
    check = page.get_by_role("img", name="write by alice: Milk.checked = true")
    assert check.count() == 1
    assert re.search(r"at \d{13}\.\d+", check.locator("title").text_content())

    # Concurrent writes: alice's check of Milk against bob's add of milk (which unchecks it): bob's,
    # the later, wins; every device shows Milk unchecked, as the run expected.
    winners = page.get_by_role("table", name="Registers written concurrently: who won and why")
    milk = winners.get_by_role("row", name=re.compile(r"^Milk · checked"))
    assert milk.count() == 1
    assert "false" in milk.get_by_role("cell").nth(2).text_content()
    assert "bob" in milk.get_by_role("cell").nth(2).text_content()
    assert milk.get_by_role("cell").nth(3).text_content() == "later timestamp"

    # Each device's final list, as the scenario's expectations say.
    for device in ["alice", "bob", "carol"]:
        shown = page.get_by_role("region", name=f"{device}'s list").text_content()
        assert "[ ] Milk (2)" in shown and "[ ] Eggs" in shown and "Bread" not in shown, shown

    out = os.environ.get("BASKET_SCREENSHOTS") or os.path.join(ROOT, ".build", "web-screenshots")
    os.makedirs(out, exist_ok=True)
    page.screenshot(path=os.path.join(out, "trace-three-devices.png"), full_page=False)
    context.close()


def test_a_failed_run_is_drawn_with_the_step_that_failed(browser, workspace):
    scenario = os.path.join(ROOT, "scenarios", "title-later-wins.scenario")
    result, path = run_traced(workspace, scenario, plant="first-writer-wins")
    assert result.returncode == 1, result.stdout
    assert "trace written to" in result.stdout
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto("file://" + path)
    steps = page.get_by_role("table", name="Every step")
    failed = steps.locator("tr.failed")
    assert failed.count() == 1
    assert "expect" in failed.text_content()
    context.close()
