"""The reports in a real headless Chromium, driven by Playwright: each loads from
``file://`` with no console error and no request, every tab renders (a screenshot of each
is saved: see ``viz_artifacts``), and the controls do what they say.

Chromium is Debian's ``chromium`` package (or ``$RELAYIR_CHROMIUM``), never a browser
Playwright downloads; the tests are skipped, saying why, when there is none.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")

TABS = ("pipeline", "gradient", "executor", "vm", "optimizers")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str | None:
    for candidate in (os.environ.get("RELAYIR_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium found (apt-get install -y chromium, or set "
                             "RELAYIR_CHROMIUM to a Chromium executable)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=ARGS, viewport={"width": 1400, "height": 900})
        yield context
        context.close()


class Opened:
    """A report open in a page, with what the page logged and requested."""

    def __init__(self, browser, report):
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.uri = report.path.resolve().as_uri()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("request", self._request)
        start = time.perf_counter()
        self.page.goto(self.uri)
        self.page.wait_for_function("window.RX_READY === true", timeout=30_000)
        self.seconds = time.perf_counter() - start

    def _console(self, message) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"{message.type}: {message.text}")

    def _request(self, request) -> None:
        if request.url != self.uri:
            self.requests.append(request.url)

    def tab(self, name: str) -> None:
        self.page.click(f"#tab-{name}")
        self.page.wait_for_selector(f"#view-{name}:not([hidden])")

    def html(self, selector: str) -> str:
        return self.page.inner_html(selector)

    def close(self) -> None:
        self.page.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "resnet18", "list"])
def test_report_opens_offline_and_every_tab_renders(browser, viz_report, viz_artifacts, name):
    report = viz_report(name)
    opened = Opened(browser, report)
    try:
        print(f"{name}: generated in {report.seconds:.1f} s, opened in {opened.seconds:.2f} s")
        for tab in TABS:
            opened.tab(tab)
            opened.page.wait_for_timeout(250)  # animations and layouts settle
            shot = viz_artifacts / f"{name}-{tab}.png"
            opened.page.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
        # the states the README shows: after the last pass (fused), a step inside a call
        opened.tab("pipeline")
        opened.page.fill("#pass-slider", str(len(report.data["pipeline"]["steps"]) - 1))
        opened.page.screenshot(path=str(viz_artifacts / f"{name}-pipeline-fused.png"))
        opened.tab("vm")
        steps = report.data["vm"]["trace"]["steps"]
        opened.page.fill("#vm-slider", str(max(i for i, s in enumerate(steps[:60])
                                               if s[0] == max(t[0] for t in steps[:60]))))
        opened.page.screenshot(path=str(viz_artifacts / f"{name}-vm-deep.png"))
        assert opened.errors == []
        assert opened.requests == []
        if name == "resnet18":
            assert opened.seconds < 3.0
    finally:
        opened.close()


def _pass_text(opened) -> str:
    return opened.page.inner_text("#pass-text").rstrip("\n")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "resnet18"])
def test_next_pass_changes_the_graph_and_the_text(browser, viz_report, name):
    report = viz_report(name)
    steps = report.data["pipeline"]["steps"]
    opened = Opened(browser, report)
    try:
        changed = 0
        for i in range(1, len(steps)):
            text, graph = _pass_text(opened), opened.html("#pipeline-graph")
            opened.page.click("#next-pass")
            assert opened.page.input_value("#pass-slider") == str(i)
            label = opened.page.inner_text("#pass-label")
            assert steps[i]["name"] in label
            new_text, new_graph = _pass_text(opened), opened.html("#pipeline-graph")
            if steps[i].get("same"):
                assert "no change" in label and new_text == text and new_graph == graph
            else:
                assert new_text == steps[i]["text"]
                assert new_text != text and new_graph != graph
                changed += 1
        assert changed >= 2
        assert opened.errors == []
    finally:
        opened.close()


@pytest.mark.slow
def test_search_finds_nodes_in_folded_blocks(browser, viz_report):
    opened = Opened(browser, viz_report("resnet18"))
    try:
        info = opened.page.inner_text("#pipeline-graph-info")
        assert "blocks folded" in info
        folded = int(info.split(", ")[2].split()[0])
        opened.page.fill("#pipeline-graph-search", "nn.conv2d")
        opened.page.click("#pipeline-graph-find")
        info = opened.page.inner_text("#pipeline-graph-info")
        assert "20 matches" in info
        assert "blocks folded" not in info or int(info.split(", ")[2].split()[0]) < folded
        assert opened.page.locator("#pipeline-graph .node.match").count() == 20
    finally:
        opened.close()


def _vm_state(opened):
    return (opened.page.get_attribute("#vm-listing .ins.current", "data-pc"),
            opened.page.inner_text("#vm-func"), opened.html("#vm-registers"),
            opened.page.inner_text("#vm-step-label"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["list", "mlp"])
def test_vm_step_buttons_move_the_instruction_and_the_registers(browser, viz_report, name):
    report = viz_report(name)
    steps = report.data["vm"]["trace"]["steps"]
    functions = report.data["vm"]["functions"]
    opened = Opened(browser, report)
    try:
        opened.tab("vm")
        pc, func, regs, label = _vm_state(opened)
        assert int(pc) == steps[0][2] and label.startswith(f"step 1 of {len(steps)}")
        opened.page.click("#vm-step")
        pc2, func2, regs2, label2 = _vm_state(opened)
        assert int(pc2) == steps[1][2] and label2.startswith("step 2 of")
        assert regs2 != regs
        opened.page.click("#vm-back")
        assert _vm_state(opened) == (pc, func, regs, label)
        # step until the run enters another function: the listing and the frame follow
        entered = next(i for i, s in enumerate(steps) if s[1] != steps[0][1]) \
            if any(s[1] != steps[0][1] for s in steps) else None
        if entered is not None:
            for _ in range(entered):
                opened.page.click("#vm-step")
            pc3, func3, _, _ = _vm_state(opened)
            assert functions[steps[entered][1]]["name"] in func3
            assert int(pc3) == steps[entered][2]
            assert opened.page.locator("#vm-stack .frame").count() == 2
        opened.page.click("#vm-end")
        assert _vm_state(opened)[3].startswith(f"step {len(steps)} of")
        assert "returned to Python" in opened.page.inner_text("#vm-registers")
        if name == "list":
            assert "Cons(" in opened.page.inner_text("#vm-values")
            built = max(i for i, s in enumerate(steps) if functions[s[1]]["ops"][s[2]] ==
                        "AllocADT" and s[3][0][2].startswith("Cons("))
            opened.page.fill("#vm-slider", str(built))
            now = opened.page.inner_text("#vm-values .adt-row.now")
            assert "alloc_adt" in now and now.endswith(steps[built][3][0][2])
            assert opened.page.locator("#vm-listing .ins").count() == \
                len(functions[steps[built][1]]["lines"])
        opened.page.click("#vm-reset")
        assert _vm_state(opened)[0] == pc
        assert opened.errors == []
    finally:
        opened.close()


@pytest.mark.slow
def test_vm_jumps_are_drawn_and_the_taken_one_marked(browser, viz_report):
    report = viz_report("list")
    steps = report.data["vm"]["trace"]["steps"]
    functions = report.data["vm"]["functions"]
    opened = Opened(browser, report)
    try:
        opened.tab("vm")
        at = next(i for i, s in enumerate(steps) if functions[s[1]]["ops"][s[2]] == "If")
        opened.page.fill("#vm-slider", str(at))
        jumps = functions[steps[at][1]]["jumps"]
        assert opened.page.locator(".jumps .jump").count() == len(jumps)
        taken = opened.page.locator(".jumps .jump.taken")
        assert taken.count() == 1
        assert int(taken.get_attribute("data-to")) == steps[at + 1][2]
    finally:
        opened.close()


@pytest.mark.slow
def test_the_learning_rate_slider_changes_the_trajectory(browser, viz_report):
    report = viz_report("mlp")
    data = report.data["optimizers"]
    opened = Opened(browser, report)
    try:
        opened.tab("optimizers")
        opened.page.wait_for_timeout(2000)  # the first animation ends
        before = opened.page.get_attribute("#traj-SGD", "d")
        opened.page.fill("#lr-slider", "0")
        opened.page.wait_for_timeout(2000)
        after = opened.page.get_attribute("#traj-SGD", "d")
        assert after != before
        path = data["surfaces"][0]["paths"]["SGD"][0]
        assert after.count("L") == len(path) - 1  # the whole path at lr index 0
        assert str(data["surfaces"][0]["lrs"]["SGD"][0]) in opened.page.inner_text("#lr-label")
        opened.page.fill("#optim-step", "5")
        assert opened.page.get_attribute("#traj-SGD", "d").count("L") == 5
        assert opened.errors == []
    finally:
        opened.close()


@pytest.mark.slow
def test_the_numbers_on_screen_are_the_reports(browser, viz_report):
    report = viz_report("mlp")
    opened = Opened(browser, report)
    try:
        opened.tab("executor")
        stats = opened.page.inner_text("#plan-stats")
        assert f"{report.data['executor']['plan']['planned_bytes']} bytes" in stats
        opened.tab("vm")
        opened.page.click("#vm-mode-flow")
        assert opened.page.inner_text("#vm-bytecode").rstrip("\n") == \
            report.data["vm"]["bytecode"].rstrip("\n")
        opened.tab("gradient")
        assert opened.page.inner_text("#gradient-text").strip() == \
            report.data["gradient"]["before"]["text"].strip()
        opened.page.click("#grad-after")
        assert opened.page.inner_text("#gradient-text").strip() == \
            report.data["gradient"]["after"]["text"].strip()
    finally:
        opened.close()
