"""The GUI reference-solution format: parsing, the rules of `gui` and `cli+gui` tasks, and what a
located step does (no VM: the VM side is tests/vm/test_gui_replay.py)."""
import io
import zipfile

import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.tasks import TaskSpec
from desktop_env.replay import solution_steps
from desktop_env.tasks.solution import (Condition, GuiStep, ShellStep, Target, chord_keys, interface_of,
                                        solution_items)


#: The opening tag of an accessibility tree as the in-VM server writes it (its namespaces).
TREE_HEAD = ('<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
             'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component">')


def _task(solution, tags=("gui",)):
    return TaskSpec.from_json({"id": "t", "instruction": "x", "tags": list(tags),
                               "evaluator": {"func": "infeasible"}, "solution": solution})


# -- parsing -------------------------------------------------------------------------------------

def test_targets_are_found_one_way():
    a11y = Target.from_json({"role": "push button", "name": "OK"})
    assert a11y.kind == "a11y" and a11y.role == "push-button"
    dom = Target.from_json({"css": "button", "text": "Run", "url": "http://localhost:3000", "index": 1})
    assert dom.kind == "dom" and dom.index == 1
    assert "css 'button' with text 'Run' (match #1) in the page at http://localhost:3000" == dom.describe()
    with pytest.raises(TaskConfigError, match="mixes accessibility keys"):
        Target.from_json({"role": "link", "css": "a"})
    with pytest.raises(TaskConfigError, match="names nothing to find"):
        Target.from_json({"url": "http://x"})
    with pytest.raises(TaskConfigError, match="unknown key.*selector"):
        Target.from_json({"selector": "a"})
    with pytest.raises(TaskConfigError, match="field target.index"):
        Target.from_json({"css": "a", "index": -1})


def test_steps_name_the_field_of_what_is_wrong():
    step = GuiStep.from_json({"gui": "click", "target": {"role": "push-button", "name": "Save"}, "at": [0.1, 0.5]})
    assert step.at == (0.1, 0.5) and step.describe() == "click push-button named 'Save' in the accessibility tree"
    with pytest.raises(TaskConfigError, match="unknown GUI act 'clik'; did you mean 'click'"):
        GuiStep.from_json({"gui": "clik"}, "task.json", "solution[2]")
    with pytest.raises(TaskConfigError, match=r"field solution\[2\]: a drag step needs to"):
        GuiStep.from_json({"gui": "drag", "target": {"css": "a"}}, "task.json", "solution[2]")
    with pytest.raises(TaskConfigError, match="does not take button"):
        GuiStep.from_json({"gui": "click", "target": {"css": "a"}, "button": "left"})
    with pytest.raises(TaskConfigError, match="'kontrol' in 'kontrol\\+s' is not a key name"):
        GuiStep.from_json({"gui": "key", "keys": "kontrol+s"})
    with pytest.raises(TaskConfigError, match="field solution\\[0\\].amount"):
        GuiStep.from_json({"gui": "scroll", "amount": 0})
    with pytest.raises(TaskConfigError, match="between 0 and 1"):
        GuiStep.from_json({"gui": "click", "target": {"css": "a"}, "at": [2, 0]})
    with pytest.raises(TaskConfigError, match="timeout_s"):
        GuiStep.from_json({"gui": "wait", "for": {"idle": True}, "timeout_s": -1})


def test_wait_conditions():
    assert Condition.from_json({"role": "frame", "name_contains": "Calc"}).kind == "appears"
    assert Condition.from_json({"gone": {"css": ".spinner"}}).kind == "gone"
    saved = Condition.from_json({"file": "/home/user/a.xlsx", "contains": "SUM("})
    assert (saved.kind, saved.contains) == ("file", "SUM(")
    assert saved.describe() == "the file /home/user/a.xlsx to hold 'SUM('"
    assert Condition.from_json({"window": "load\\.ini"}).value == "load\\.ini"
    edited = Condition.from_json({"file": "/home/user/n.txt", "contains": "database", "lacks": "datbase"})
    assert edited.describe() == "the file /home/user/n.txt to hold 'database' and no longer hold 'datbase'"
    with pytest.raises(TaskConfigError, match="absolute path"):
        Condition.from_json({"file": "a.xlsx"})
    with pytest.raises(TaskConfigError, match="takes one condition"):
        Condition.from_json({"window": "a", "url_is": "http://x"})
    with pytest.raises(TaskConfigError, match="not a regular expression"):
        Condition.from_json({"window": "("})
    with pytest.raises(TaskConfigError, match="must be true"):
        Condition.from_json({"idle": 1})


def test_chords():
    assert chord_keys("ctrl+shift+T") == ["ctrl", "shift", "T"]
    assert chord_keys("Enter") == ["enter"]
    assert chord_keys("ctrl++") == ["ctrl", "+"]


# -- rules -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("code", [
    "import subprocess\nsubprocess.run(['wmctrl', '-a', 'x'])",
    "import os\nos.system('ls')",
    "pyautogui.click(1, 2)  # then xdotool key ctrl+s",
    "from os import system",
    "pyautogui.hotkey('ctrl', 'alt', 't')",
])
def test_a_gui_task_acts_through_input_events_only(code):
    with pytest.raises(TaskConfigError, match=r"field solution\[0\]: uses"):
        solution_items(_task([{"action_space": "pyautogui", "action": code}]))
    # the same code is fine in a cli task
    assert solution_items(_task([{"action_space": "pyautogui", "action": code}], tags=("cli",)))


def test_a_gui_task_rejects_shell_and_terminal_steps():
    with pytest.raises(TaskConfigError, match="is a command, but the task is tagged `gui`"):
        solution_items(_task([{"command": "ls", "shell": True}]))
    with pytest.raises(TaskConfigError, match="terminal"):
        solution_items(_task([{"gui": "type", "text": "ls\n", "target": {"role": "terminal"}}]))
    with pytest.raises(TaskConfigError, match="terminal"):
        solution_items(_task([{"gui": "key", "keys": ["ctrl+alt+t"]}]))
    ok = solution_items(_task([{"gui": "click", "target": {"css": "a"}}, {"action": "pyautogui.press('enter')"}]))
    assert [i.kind for i in ok] == ["gui", "action"]


def test_a_cli_gui_task_marks_an_essential_gui_step():
    mixed = [{"command": "dbt build", "shell": True}, {"gui": "click", "target": {"css": "button"}}]
    with pytest.raises(TaskConfigError, match="marks at least one GUI step"):
        solution_items(_task(mixed, tags=("cli+gui",)))
    mixed[1]["essential"] = True
    task = _task(mixed, tags=("cli+gui",))
    assert [i.essential for i in solution_items(task)] == [False, True]
    steps = solution_steps(task, "pyautogui")
    assert steps[0] == ShellStep("dbt build", shell=True, index=0)
    assert [s.to_action() for s in steps] == [{"command": "dbt build", "shell": True},
                                              {"gui_step": mixed[1], "index": 1}]
    assert solution_steps(task, "pyautogui", without_essential=True) == [ShellStep("dbt build", True, 0)]
    with pytest.raises(TaskConfigError, match="command marked essential"):
        solution_items(_task([{"command": "x", "essential": True}, mixed[1]], tags=("cli+gui",)))
    assert interface_of(task) == "cli+gui"


def test_an_item_is_one_kind():
    with pytest.raises(TaskConfigError, match="exactly one of `action`, `command` or `gui`, got action and gui"):
        solution_items(_task([{"action": "DONE", "gui": "click"}]))


# -- what a located step does ---------------------------------------------------------------------------

def test_located_steps_become_computer_13_actions_in_either_space():
    from desktop_env.replay.locate import Box
    from desktop_env.replay.gui import _acts, as_action

    box = Box(100, 200, 50, 20)
    click = GuiStep.from_json({"gui": "click", "target": {"css": "a"}, "at": [0, 0]})
    assert _acts(click, box, None) == [{"action_type": "CLICK", "x": 100, "y": 200}]
    typed = GuiStep.from_json({"gui": "type", "text": "A14\n", "target": {"role": "combo-box"}})
    assert _acts(typed, box, None) == [{"action_type": "CLICK", "x": 125, "y": 210},
                                       {"action_type": "TYPING", "text": "A14\n"}]
    keys = GuiStep.from_json({"gui": "key", "keys": ["ctrl+s", "Enter"]})
    assert _acts(keys, None, None) == [{"action_type": "HOTKEY", "keys": ["ctrl", "s"]},
                                      {"action_type": "PRESS", "key": "enter"}]
    drag = GuiStep.from_json({"gui": "drag", "target": {"css": "a"}, "to": {"css": "b"}})
    assert _acts(drag, box, Box(0, 0, 10, 10))[-1] == {"action_type": "DRAG_TO", "x": 5, "y": 5}

    class Env:
        screen = (1920, 1080)
        action_space_name = "pyautogui"

    env = Env()
    assert as_action({"action_type": "CLICK", "x": 125, "y": 210}, env) == \
        "pyautogui.click(125, 210, button='left', clicks=1)"
    assert as_action({"action_type": "TYPING", "text": "hé"}, env) == "pyautogui.write('hé')"
    env.action_space_name = "computer_13"
    assert as_action({"action_type": "PRESS", "key": "enter"}, env) == {"action_type": "PRESS", "key": "enter"}


def test_file_contains_reads_zip_documents():
    from desktop_env.replay.locate import file_contains

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/worksheets/sheet1.xml", "<f>SUM(B2:B13)</f>")
    assert file_contains(buf.getvalue(), "SUM(") and not file_contains(buf.getvalue(), "AVERAGE(")
    assert file_contains(b"batch_size = 500\n", "batch_size") and not file_contains(b"x", "batch_size")
    assert not file_contains(buf.getvalue()[:30], "SUM(")  # a zip still being written


def test_a11y_targets_match_the_showing_elements_of_the_tree():
    from desktop_env.a11y_tree import parse_elements
    from desktop_env.replay.locate import _a11y_matches

    xml = (TREE_HEAD +
           '<push-button name="Save" st:showing="true" st:visible="true" cp:screencoord="(10, 20)" cp:size="(80, 30)"/>'
           '<push-button name="Save As" st:showing="true" st:visible="true" cp:screencoord="(100, 20)" '
           'cp:size="(80, 30)"/>'
           '<push-button name="Save" cp:screencoord="(10, 900)" cp:size="(80, 30)"/>'
           '</desktop-frame>')
    elements = parse_elements(xml, (1920, 1080))
    exact = [e for e in elements if _a11y_matches(e, Target.from_json({"role": "push-button", "name": "Save"}))]
    assert [(e.x, e.y) for e in exact] == [(10, 20)]  # the one not showing is left out
    part = [e for e in elements if _a11y_matches(e, Target.from_json({"name_contains": "save"}))]
    assert len(part) == 2
    focused = Target.from_json({"role": "push-button", "state": "focused"})
    assert not [e for e in elements if _a11y_matches(e, focused)]
    inner = Target.from_json({"role": "push-button", "within": {"role": "dialog", "name": "Find and Replace"},
                              "index": 1, "state": ["showing"]})
    assert inner.describe() == ("push-button that is showing inside the dialog named 'Find and Replace' "
                                "(match #1) in the accessibility tree")
    with pytest.raises(TaskConfigError, match="field target.within: must be an accessibility-tree target"):
        Target.from_json({"role": "text", "within": {"css": "form"}})
    # any container that matches holds the element, so an index there would be silently ignored
    with pytest.raises(TaskConfigError, match=r"field target.within.index: takes no index.*put index on the target"):
        Target.from_json({"role": "table-cell", "name": "Week", "within": {"role": "tree-table", "index": 4}})


def test_a_failed_look_says_when_the_servers_walk_was_cut_short():
    """A target missing from a tree the server stopped reading (its time or node limit) is not absent
    from the screen: the locator's reason says so, or a slow walk reads as a wrong target."""
    from desktop_env.replay.locate import Locator

    xml = (TREE_HEAD +
           '<push-button name="Save" st:showing="true" st:visible="true" cp:screencoord="(10, 20)" cp:size="(80, 30)"/>'
           '</desktop-frame>')

    class Guest:
        truncated: list = []

        def accessibility_tree_with_stats(self, **_):
            return xml, {"nodes": 2, "hidden": 0, "truncated": self.truncated, "elapsed_s": 120.4}

    guest = Guest()
    locator = Locator(controller=guest, cdp_url=None, screen=(1920, 1080))
    target = Target.from_json({"role": "check-box", "name": "editor.formatOnSave"})
    assert "cut short" not in locator.find(target).reason
    guest.truncated = ["time"]
    reason = locator.find(target).reason
    assert "cut short by its time limit after 120.4 s" in reason and reason.startswith("no showing element matched")
    assert locator.find(Target.from_json({"role": "push-button", "name": "Save"})).exists


def test_a_wait_for_a_target_to_go_away_needs_a_look_that_read_the_screen():
    """Only a look that read the tab's page (or the whole tree) and did not find the target proves it went
    away: a page DevTools could not read, a tree that could not be read or whose walk was cut short, says
    nothing, so a wait for it to go away goes on looking."""
    from desktop_env.replay.locate import Locator
    from desktop_env.tasks.solution import Condition

    dialog = ('<dialog name="Find and Replace" st:showing="true" st:visible="true" cp:screencoord="(0, 0)" '
              'cp:size="(400, 300)"/>')

    class Guest:
        def __init__(self):
            self.xml, self.truncated, self.fail = TREE_HEAD + dialog + "</desktop-frame>", [], False

        def accessibility_tree_with_stats(self, **_):
            if self.fail:
                raise TimeoutError("the in-VM server did not answer within 60 s")
            return self.xml, {"truncated": self.truncated, "elapsed_s": 3.0}

    guest = Guest()
    locator = Locator(controller=guest, cdp_url=None, screen=(1920, 1080))
    gone = Condition.from_json({"gone": {"role": "dialog", "name": "Find and Replace"}})
    assert locator.holds(gone) == (False, "it is still there")
    guest.xml = TREE_HEAD + "</desktop-frame>"
    guest.fail = True
    ok, seen = locator.holds(gone)
    assert not ok and "could not be told" in seen and "did not answer" in seen
    guest.fail, guest.truncated = False, ["nodes"]
    ok, seen = locator.holds(gone)
    assert not ok and "cut short by its nodes limit" in seen
    guest.truncated = []
    assert locator.holds(gone)[0]

    class Page:  # a tab whose page DevTools could not read (a navigation, a query that timed out)
        url = "http://localhost:8080/xcoms?key_pattern=cancelled"

        def __init__(self, error=None, seen=None):
            self.error, self.seen = error, seen

        def evaluate(self, *_):
            if self.error:
                raise RuntimeError(self.error)
            return self.seen

    other = {"href": "http://localhost:8088/superset/welcome/", "front": False, "box": None, "count": 0}
    here = {"href": Page.url, "front": True, "box": None, "count": 0}
    rows = Condition.from_json({"gone": {"css": "td", "text": "completed", "url": "http://localhost:8080/xcoms"}})
    pages = [Page(seen=other), Page(error="Execution context was destroyed")]
    locator._pages = lambda: pages
    try:
        ok, seen = locator.holds(rows)
        assert not ok and "Execution context was destroyed" in seen
        pages[1] = Page(seen=here)  # read, and the row is not there
        assert locator.holds(rows)[0]
        pages[1] = Page(error="Target closed")  # a tab of another site that cannot be read does not matter
        pages[1].url = "http://localhost:3000/"
        assert locator.holds(rows)[0]
    finally:
        locator.close()
