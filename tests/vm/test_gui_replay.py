"""GUI steps of reference solutions on a real VM (base image, from the ``chromium`` warm state): a page
element found through the DOM (scrolled into view first, in the page or in the box that scrolls it) and
through the accessibility tree, clicked with ordinary input events; a wait on a window title; a step whose
target is absent stops the replay naming the step and what it looked for, and the episode keeps its
screenshot; a target's ``url`` is matched against the URL the tab shows after a single-page app navigated
itself (history.pushState)."""
import time

import pytest

from desktop_env.errors import SolutionStepFailed
from desktop_env.harness.config import RunConfig
from desktop_env.replay import GuiStep, Replayer

pytestmark = pytest.mark.vm

PAGE = "/tmp/gui-replay.html"
URL = f"file://{PAGE}"
HTML = ("<!doctype html><title>Before</title><body><p>A long page.</p>"
        "<button id='nav' onclick=\"history.pushState({}, '', '#spa'); "
        "document.body.insertAdjacentHTML('afterbegin', '<b id=spa>Moved</b>')\">Navigate</button>"
        "<div style='height:2400px'></div>"
        "<div id='box' style='position:fixed;top:40px;right:10px;width:300px;height:200px;overflow:auto'>"
        "<div style='height:600px'></div><button id='inner' "
        "onclick=\"document.title = 'Inner ' + (++window.m)\">Inside</button></div>"
        "<button id='go' onclick=\"document.title = 'Clicked ' + (++window.n)\">Press me</button>"
        "<script>window.n = 0; window.m = 0;</script></body>")
TASK = {"id": "gui-replay-check", "instruction": "Press the button.", "snapshot": "base:chromium",
        "config": [{"type": "execute", "parameters": {"command": ["python3", "-c",
                                                                  f"open({PAGE!r}, 'w').write({HTML!r})"]}},
                   {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [URL]}}],
        "evaluator": {"func": "infeasible"}, "tags": ["gui"],
        "solution": [{"gui": "click", "target": {"role": "push-button", "name": "No such button"}, "timeout_s": 5}]}


@pytest.fixture(scope="module")
def env(base_image):
    from desktop_env.envs.desktop_env import DesktopEnv

    env = DesktopEnv(path_to_vm=base_image.name, require_a11y_tree=False)
    env.reset(options={"task_config": TASK})
    yield env
    env.close()


def _step(env, item: dict, index: int = 0):
    return Replayer(env).run(GuiStep.from_json(item, index=index), time.monotonic() + 900)


def test_a_page_element_is_found_through_the_dom_scrolled_into_view_and_clicked(env):
    before = env.step_count
    _, _, _, _, info = _step(env, {"gui": "click", "target": {"css": "#go", "url": URL}})
    assert "error" not in info, info.get("error")
    assert info["scrolls"] >= 1, "the button starts below the fold: the wheel brought it into view"
    assert env.step_count == before + 1, "the scrolls and the click are one step of the episode (max_steps)"
    assert info["acted"][0]["action_type"] == "CLICK" and info["located"]["w"] > 0
    _, _, _, _, info = _step(env, {"gui": "wait", "for": {"window": "^Clicked 1"}, "timeout_s": 120})
    assert "error" not in info, info.get("error")


def test_an_element_hidden_by_the_container_that_scrolls_it_is_scrolled_into_view_there(env):
    """The button lies 600 px down a 200-px box that scrolls its own content (as a notebook's panel): the
    window would show that point, but the box hides it. The wheel over the box's centre brings it up."""
    _, _, _, _, info = _step(env, {"gui": "click", "target": {"css": "#inner", "url": URL}})
    assert "error" not in info, info.get("error")
    assert info["scrolls"] >= 1, "the box was scrolled"
    _, _, _, _, info = _step(env, {"gui": "wait", "for": {"window": "^Inner 1"}, "timeout_s": 120})
    assert "error" not in info, info.get("error")


def test_a_page_element_is_found_through_the_accessibility_tree(env):
    _, _, _, _, info = _step(env, {"gui": "click", "target": {"role": "push-button", "name": "Press me"}})
    assert "error" not in info, info.get("error")
    _, _, _, _, info = _step(env, {"gui": "wait", "for": {"window": "^Clicked 2"}, "timeout_s": 120})
    assert "error" not in info, info.get("error")


def test_the_page_is_read_over_devtools_with_the_boxes_of_the_atspi_walk(env):
    """Chromium of the ``chromium`` state has a remote-debugging port: the server reads its page from
    the DOM (``reader="devtools"``), with the same button, name and box as the AT-SPI walk of it."""
    import xml.etree.ElementTree as ET

    cp = "{https://accessibility.ubuntu.example.org/ns/component}"

    def button(web):
        xml, stats = env.controller.accessibility_tree_with_stats(web=web)
        for doc in ET.fromstring(xml).iter("document-web"):
            found = next((b for b in doc.iter("push-button") if b.get("name") == "Press me"), None)
            if found is not None:
                return doc, found, stats
        raise AssertionError(f"no push-button 'Press me' in any document of the {web} read")

    doc, ours, stats = button("devtools")
    assert doc.get("reader") == "devtools" and stats["pages"] >= 1
    atspi_doc, theirs, atspi_stats = button("atspi")
    assert atspi_doc.get("reader") is None and atspi_stats["pages"] == 0
    for key in ("screencoord", "size"):
        a = [int(v) for v in ours.get(cp + key).strip("()").split(",")]
        b = [int(v) for v in theirs.get(cp + key).strip("()").split(",")]
        assert all(abs(x - y) <= 2 for x, y in zip(a, b)), (key, a, b)


def test_a_missing_target_stops_the_replay_naming_the_step_and_keeps_the_screenshot(env, tmp_path):
    from desktop_env.agents.simple import OracleAgent
    from desktop_env.harness.episode import run_episode
    from desktop_env.tasks import TaskSpec

    _, _, _, _, info = _step(env, TASK["solution"][0], index=3)
    assert info["error"].startswith("GUI step solution[3] (click push-button named 'No such button' in the "
                                    "accessibility tree) could not locate"), info["error"]
    assert "acted" not in info, "nothing is clicked when the target is not found"

    task = TaskSpec.from_json(TASK)
    config = RunConfig(max_steps=10, task_timeout=900, result_dir=tmp_path / "results")
    with pytest.raises(SolutionStepFailed, match=r"field solution\[0\].*No such button"):
        run_episode(env, OracleAgent(), task, config, tmp_path, time.monotonic() + 900)
    assert sorted(p.name.split("_")[1] for p in tmp_path.glob("step_*.png")) == ["0", "1"], \
        "the start and the failed step's screenshots are kept"


def test_a_target_url_matches_the_url_a_page_moved_itself_to(env):
    _, _, _, _, info = _step(env, {"gui": "click", "target": {"css": "#nav", "url": URL}})
    assert "error" not in info, info.get("error")
    _, _, _, _, info = _step(env, {"gui": "wait", "for": {"css": "#spa", "url": URL + "#spa"}, "timeout_s": 120})
    assert "error" not in info, info.get("error")
    _, _, _, _, info = _step(env, {"gui": "wait", "for": {"css": "#spa", "url": URL + "#elsewhere"}, "timeout_s": 5})
    assert "no tab shows" in info["error"], info["error"]


LATE_PAGE = "/tmp/rendered-late.html"
LATE_HTML = ("<!doctype html><title>Late</title><body><script>setTimeout(() => document.body.insertAdjacentHTML("
             "'beforeend', '<p id=late>Rendered late</p>'), 6000);</script></body>")


def test_setup_ends_once_the_page_it_opened_has_rendered_its_content(env):
    """A page whose content appears 6 s after its load event (as a web UI's under emulation): the task's
    setup (chrome_open_tabs) returns only once it shows, so the agent's first observation has it."""
    late = {**TASK, "id": "rendered-late", "config": [
        {"type": "execute", "parameters": {"command": ["python3", "-c", f"open({LATE_PAGE!r}, 'w').write({LATE_HTML!r})"]}},
        {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [f"file://{LATE_PAGE}"]}}]}
    env.reset(options={"task_config": late})
    _, _, _, _, info = _step(env, {"gui": "wait", "for": {"css": "#late", "url": f"file://{LATE_PAGE}"},
                                   "timeout_s": 1})
    assert "error" not in info, info.get("error")
