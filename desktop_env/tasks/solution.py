"""Reference solutions: the items of a task's ``solution`` list, read into typed steps, and the rules a
``gui`` or ``cli+gui`` task's solution follows (the replay is :mod:`desktop_env.replay`).

A solution is a list of items of three kinds:

- ``{"action": ..., "action_space": "pyautogui" | "computer_13"}``: one agent action
  (:class:`ActionStep`), run with ``env.step`` (``WAIT``/``DONE``/``FAIL`` fit either space);
- ``{"command": "...", "shell": true}``: a shell step (:class:`ShellStep`) run in the guest (never in a
  ``gui`` task);
- ``{"gui": ACT, ...}``: a GUI step (:class:`GuiStep`): it *locates* its target when it is replayed,
  through the accessibility tree (desktop apps) or the page's DOM over the DevTools protocol (pages
  in Chromium), then acts on it with ordinary input events at screen coordinates; ``wait`` polls a
  condition with a deadline. Locating is a read-only query.

When there is no ``solution`` key, a ``solution.sh`` beside the task file is one shell step; when there is
neither, the project's kept solution for the task's id (:mod:`desktop_env.tasks.references`, for the tasks of
other suites) is used.

Rules, checked when the task's solution is read (``tasks check`` and the oracle):

- a ``gui`` task acts through input events only: no shell step, no pyautogui code that imports
  ``subprocess`` or ``os`` or calls ``xdotool``, and no typing into a terminal (a step aimed at a
  ``terminal`` or the key chord that opens one);
- a ``cli+gui`` task marks at least one GUI item (a ``gui`` step or an action) ``"essential": true``:
  ``tasks verify`` replays the solution without those items, which must score 0.0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from desktop_env.errors import TaskConfigError
from desktop_env.tasks.references import solution_source

#: GUI acts and the keys each takes besides ``gui``, ``timeout_s``, ``essential`` and ``note``:
#: (required, optional).
GUI_ACTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "click": (("target",), ("at",)),
    "double_click": (("target",), ("at",)),
    "triple_click": (("target",), ("at",)),
    "right_click": (("target",), ("at",)),
    "move": (("target",), ("at",)),
    "drag": (("target", "to"), ("at",)),
    "type": (("text",), ("target", "at")),
    "key": (("keys",), ()),
    "scroll": (("amount",), ("target", "at")),
    "wait": (("for",), ()),
}
_COMMON_KEYS = ("gui", "timeout_s", "essential", "note")

#: Keys of a target: found through the accessibility tree (``role``/``name``/...) or a page's DOM
#: (``css``/``text``/``url``); ``index`` picks among several matches (document order).
A11Y_KEYS = ("role", "name", "name_contains", "text_contains", "state", "within")
DOM_KEYS = ("css", "text", "url")
#: Keys of a wait condition besides a target's (the element appears): see :class:`Condition`.
CONDITION_KEYS = ("gone", "window", "file", "url_is", "idle")

#: pyautogui code a ``gui`` solution may not contain: shell access and window tools act behind the GUI.
_FORBIDDEN_CODE = re.compile(r"\bimport\s+(subprocess|os)\b|\bfrom\s+(subprocess|os)\b\s+import|\bsubprocess\.|"
                             r"\bos\.(system|popen|exec)|xdotool|__import__")
#: The chord that opens a terminal on this desktop, in pyautogui code or a key step.
_TERMINAL_CODE = re.compile(r"hotkey\(\s*['\"]ctrl['\"]\s*,\s*['\"]alt['\"]\s*,\s*['\"]t['\"]")
_TERMINAL_CHORDS = {"ctrl+alt+t", "alt+ctrl+t"}


def _err(message: str, where, field_: str) -> TaskConfigError:
    return TaskConfigError(message, path=None if where is None else str(where), field=field_)


@dataclass
class Target:
    """What a GUI step acts on, found at replay time.

    Through the accessibility tree (desktop apps): ``role`` (the tree's tag, e.g. ``push-button``;
    spaces are read as ``-``), ``name`` (exact), ``name_contains`` and ``text_contains``
    (case-insensitive), ``state`` (a state the element has, e.g. ``focused``, ``checked``; or a list)
    and ``within`` (another a11y target, without ``index``: the element must lie in the box of any element it
    matches, e.g. a dialog). Through the DOM of a page in Chromium: ``css`` (a selector; default any
    element), ``text`` (case-insensitive part of its text; with no ``css`` the innermost element
    holding it) and ``url`` (the tab's URL starts with this; default the tab in front). ``index``
    picks the n-th match in document order (default 0).
    """

    kind: str  # "a11y" or "dom"
    role: str | None = None
    name: str | None = None
    name_contains: str | None = None
    text_contains: str | None = None
    state: tuple[str, ...] = ()
    within: "Target | None" = None
    css: str | None = None
    text: str | None = None
    url: str | None = None
    index: int = 0

    @classmethod
    def from_json(cls, data: Any, where=None, field_: str = "target") -> "Target":
        """Parse a target object.

        Raises:
            TaskConfigError: not an object, keys of both kinds or of neither, an unknown key, or a
                value of the wrong type (naming the field).
        """
        if not isinstance(data, dict):
            raise _err(f"must be an object with {'/'.join(A11Y_KEYS)} (accessibility tree) or "
                       f"{'/'.join(DOM_KEYS)} (a page's DOM), got {data!r}", where, field_)
        unknown = set(data) - {*A11Y_KEYS, *DOM_KEYS, "index"}
        if unknown:
            raise _err(f"unknown key(s) {', '.join(sorted(unknown))}; a target takes {', '.join(A11Y_KEYS)} "
                       f"(accessibility tree) or {', '.join(DOM_KEYS)} (DOM), and index", where, field_)
        a11y = [k for k in A11Y_KEYS if k in data]
        dom = [k for k in DOM_KEYS if k in data]
        if a11y and dom:
            raise _err(f"mixes accessibility keys ({', '.join(a11y)}) with DOM keys ({', '.join(dom)}): a target "
                       "is found one way", where, field_)
        if not a11y and not (set(dom) & {"css", "text"}):
            raise _err("names nothing to find: give role/name/name_contains/text_contains, or css/text", where, field_)
        for key in (*a11y, *dom):
            if key in ("state", "within"):
                continue
            if not isinstance(data[key], str) or not data[key]:
                raise _err(f"{key} must be a non-empty string, got {data[key]!r}", where, f"{field_}.{key}")
        index = data.get("index", 0)
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise _err(f"must be an integer >= 0, got {index!r}", where, f"{field_}.index")
        values = {k: data[k] for k in (*a11y, *dom) if k not in ("state", "within")}
        if "role" in values:
            values["role"] = values["role"].strip().replace(" ", "-")
        if "state" in data:
            states = data["state"] if isinstance(data["state"], list) else [data["state"]]
            if not states or not all(isinstance(x, str) and x for x in states):
                raise _err(f"must be a state name such as \"focused\" or a list of them, got {data['state']!r}",
                           where, f"{field_}.state")
            values["state"] = tuple(x.strip().replace(" ", "_") for x in states)
        if "within" in data:
            within = Target.from_json(data["within"], where, f"{field_}.within")
            if within.kind != "a11y":
                raise _err("must be an accessibility-tree target (for a page, write a CSS descendant selector)",
                           where, f"{field_}.within")
            if "index" in data["within"]:
                raise _err("takes no index: the element is looked for in every container that matches; put index "
                           "on the target itself (the n-th match in document order inside them)", where,
                           f"{field_}.within.index")
            values["within"] = within
        return cls(kind="a11y" if a11y else "dom", index=index, **values)

    def describe(self) -> str:
        """The target as written, for messages (``push-button named 'OK'``, ``css 'button' with text 'Run'``)."""
        if self.kind == "a11y":
            parts = [self.role or "any element"]
            if self.name is not None:
                parts.append(f"named {self.name!r}")
            if self.name_contains is not None:
                parts.append(f"with {self.name_contains!r} in its name")
            if self.text_contains is not None:
                parts.append(f"with {self.text_contains!r} in its text")
            if self.state:
                parts.append(f"that is {' and '.join(self.state)}")
            if self.within is not None:
                parts.append(f"inside the {self.within.describe().removesuffix(' in the accessibility tree')}")
            where = "in the accessibility tree"
        else:
            parts = [f"css {self.css!r}" if self.css else "the innermost element"]
            if self.text is not None:
                parts.append(f"with text {self.text!r}")
            where = f"in the page at {self.url}" if self.url else "in the page in front"
        nth = f" (match #{self.index})" if self.index else ""
        return " ".join(parts) + nth + " " + where


@dataclass
class Condition:
    """What a ``wait`` step waits for; exactly one of:

    - a target's keys: that element appears (``{"role": "push-button", "name": "OK"}``, ``{"css": ...}``);
    - ``{"gone": TARGET}``: that element is no longer there;
    - ``{"window": REGEX}``: a window whose title matches is open;
    - ``{"file": PATH}``: a file exists in the guest (absolute path); with ``"contains": TEXT``, it
      holds that text (for a zip-based document such as .xlsx, .ods or .docx: one of its members does),
      and with ``"lacks": TEXT`` it no longer holds that one: how a step waits for a save to land;
    - ``{"url_is": PREFIX}``: a tab of Chromium shows a URL starting with PREFIX;
    - ``{"idle": true}``: the screen stopped changing and the guest's CPU is mostly idle.
    """

    kind: str  # "appears", "gone", "window", "file", "url_is", "idle"
    target: Target | None = None
    value: Any = None
    contains: str | None = None
    lacks: str | None = None

    @classmethod
    def from_json(cls, data: Any, where=None, field_: str = "for") -> "Condition":
        """Parse a wait condition.

        Raises:
            TaskConfigError: not an object, several conditions, or a malformed value.
        """
        if not isinstance(data, dict) or not data:
            raise _err(f"must be an object: a target, or one of {', '.join(CONDITION_KEYS)}; got {data!r}",
                       where, field_)
        special = [k for k in CONDITION_KEYS if k in data]
        if not special:
            return cls("appears", target=Target.from_json(data, where, field_))
        key = special[0]
        value = data[key]
        allowed = {key, "contains", "lacks"} if key == "file" else {key}
        if len(special) != 1 or set(data) - allowed:
            raise _err(f"takes one condition, got {', '.join(sorted(data))}", where, field_)
        for part in ("contains", "lacks"):
            if part in data and (not isinstance(data[part], str) or not data[part]):
                raise _err(f"must be a non-empty string, got {data[part]!r}", where, f"{field_}.{part}")
        if key == "gone":
            return cls("gone", target=Target.from_json(value, where, f"{field_}.gone"))
        if key == "idle":
            if value is not True:
                raise _err("must be true", where, f"{field_}.idle")
            return cls("idle", value=True)
        if not isinstance(value, str) or not value:
            raise _err(f"must be a non-empty string, got {value!r}", where, f"{field_}.{key}")
        if key == "window":
            try:
                re.compile(value)
            except re.error as exc:
                raise _err(f"is not a regular expression ({exc})", where, f"{field_}.window") from exc
        if key == "file" and not value.startswith("/"):
            raise _err(f"must be an absolute path in the guest, got {value!r}", where, f"{field_}.file")
        return cls(key, value=value, contains=data.get("contains"), lacks=data.get("lacks"))

    def describe(self) -> str:
        """The condition, for messages."""
        if self.kind == "appears":
            return f"{self.target.describe()} to appear"
        if self.kind == "gone":
            return f"{self.target.describe()} to go away"
        if self.kind == "file" and (self.contains or self.lacks):
            parts = ([f"hold {self.contains!r}"] if self.contains else []) + (
                [f"no longer hold {self.lacks!r}"] if self.lacks else [])
            return f"the file {self.value} to {' and '.join(parts)}"
        return {"window": f"a window titled like {self.value!r}", "file": f"the file {self.value}",
                "url_is": f"a tab at {self.value}", "idle": "the desktop to be idle"}[self.kind]


@dataclass
class GuiStep:
    """One GUI step of a reference solution: ``{"gui": ACT, ...}`` (acts in :data:`GUI_ACTS`).

    ``click``/``double_click``/``triple_click``/``right_click``/``move`` a ``target``; ``drag`` from
    ``target`` to ``to``; ``type`` ``text`` (clicking ``target`` first when given); ``key`` presses
    ``keys`` (a chord such as ``"ctrl+s"``, or a list of chords pressed in turn); ``scroll`` the wheel
    ``amount`` clicks (negative: down) over ``target`` or where the pointer is; ``wait`` until ``for``
    holds (a :class:`Condition`). ``at`` is the point of the target's box to act on, as fractions
    ``[x, y]`` (default the centre). Locating and waiting give up after ``timeout_s`` (default: the
    time limits ``oracle.locate`` / ``oracle.wait``). ``essential`` marks a step without which the
    task must fail; ``note`` is free text.
    """

    act: str
    target: Target | None = None
    to: Target | None = None
    text: str | None = None
    keys: list[str] = field(default_factory=list)
    amount: int = 0
    until: Condition | None = None
    at: tuple[float, float] = (0.5, 0.5)
    timeout_s: float | None = None
    essential: bool = False
    note: str = ""
    #: its place in the solution list, and the item as written (what a trajectory records)
    index: int = 0
    source: dict = field(default_factory=dict, repr=False, compare=False)

    kind: ClassVar[str] = "gui"
    is_gui: ClassVar[bool] = True

    @classmethod
    def from_json(cls, data: dict, where=None, field_: str | None = None, index: int = 0) -> "GuiStep":
        """Parse a ``{"gui": ...}`` item, the solution's item number ``index``.

        Args:
            field_: the item's field in messages (default ``solution[index]``).

        Raises:
            TaskConfigError: an unknown act (with a close match), a missing or unknown key, or a
                malformed value, naming the field.
        """
        field_ = field_ or f"solution[{index}]"
        act = data.get("gui")
        if act not in GUI_ACTS:
            import difflib

            close = difflib.get_close_matches(str(act), list(GUI_ACTS), n=1)
            raise _err(f"unknown GUI act {act!r}{f'; did you mean {close[0]!r}?' if close else ''} "
                       f"(acts: {', '.join(GUI_ACTS)})", where, f"{field_}.gui")
        required, optional = GUI_ACTS[act]
        missing = [k for k in required if k not in data]
        if missing:
            raise _err(f"a {act} step needs {', '.join(missing)}", where, field_)
        extra = set(data) - {*required, *optional, *_COMMON_KEYS}
        if extra:
            raise _err(f"a {act} step does not take {', '.join(sorted(extra))} (takes "
                       f"{', '.join((*required, *optional, 'timeout_s', 'essential', 'note'))})", where, field_)
        step = cls(act=act, essential=data.get("essential", False), note=data.get("note", ""), index=index,
                   source=data)
        if not isinstance(step.essential, bool):
            raise _err(f"must be true or false, got {step.essential!r}", where, f"{field_}.essential")
        if "timeout_s" in data:
            t = data["timeout_s"]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or t <= 0:
                raise _err(f"must be a number of seconds > 0, got {t!r}", where, f"{field_}.timeout_s")
            step.timeout_s = float(t)
        if "target" in data:
            step.target = Target.from_json(data["target"], where, f"{field_}.target")
        if "to" in data:
            step.to = Target.from_json(data["to"], where, f"{field_}.to")
        if "at" in data:
            at = data["at"]
            if (not isinstance(at, list) or len(at) != 2 or
                    not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in at)):
                raise _err(f"must be [x, y], fractions of the target's box between 0 and 1, got {at!r}",
                           where, f"{field_}.at")
            step.at = (float(at[0]), float(at[1]))
        if act == "type":
            if not isinstance(data["text"], str) or not data["text"]:
                raise _err(f"must be a non-empty string, got {data['text']!r}", where, f"{field_}.text")
            step.text = data["text"]
        if act == "key":
            keys = data["keys"] if isinstance(data["keys"], list) else [data["keys"]]
            if not keys or not all(isinstance(k, str) and k.strip() for k in keys):
                raise _err(f"must be a chord such as \"ctrl+s\" or a list of them, got {data['keys']!r}",
                           where, f"{field_}.keys")
            from desktop_env.actions import KEY_NAMES

            for chord in keys:
                for name in chord_keys(chord):
                    if name not in KEY_NAMES:
                        raise _err(f"{name!r} in {chord!r} is not a key name (pyautogui's names: enter, tab, "
                                   "ctrl, shift, alt, f1, pagedown, ...)", where, f"{field_}.keys")
            step.keys = keys
        if act == "scroll":
            amount = data["amount"]
            if isinstance(amount, bool) or not isinstance(amount, int) or not amount or abs(amount) > 100:
                raise _err(f"must be a non-zero integer within -100..100 (negative scrolls down), got {amount!r}",
                           where, f"{field_}.amount")
            step.amount = amount
        if act == "wait":
            step.until = Condition.from_json(data["for"], where, f"{field_}.for")
        return step

    def describe(self) -> str:
        """The step in a few words, for messages and logs."""
        if self.act == "wait":
            return f"wait for {self.until.describe()}"
        if self.act == "key":
            return f"key {' then '.join(self.keys)}"
        what = f" {self.target.describe()}" if self.target else ""
        if self.act == "type":
            return f"type {self.text[:40]!r}" + (f" into{what}" if what else "")
        if self.act == "drag":
            return f"drag{what} to {self.to.describe()}"
        if self.act == "scroll":
            return f"scroll {self.amount}" + (f" over{what}" if what else "")
        return f"{self.act}{what}"

    def to_action(self) -> dict:
        """The step as the harness records it in traj.jsonl: ``{"gui_step": ITEM, "index": i}``."""
        return {"gui_step": self.source, "index": self.index}

    def opens_terminal(self) -> bool:
        """True for a step that types into, or opens, a terminal (not GUI work)."""
        if any(t is not None and t.kind == "a11y" and t.role == "terminal" for t in (self.target, self.to)):
            return True
        return any(chord.replace(" ", "").lower() in _TERMINAL_CHORDS for chord in self.keys)


def chord_keys(chord: str) -> list[str]:
    """The key names of a chord: ``"ctrl+shift+t"`` -> ``["ctrl", "shift", "t"]``; ``"+"`` is the plus key."""
    chord = chord.strip()
    if chord == "+":
        return ["+"]
    keys = chord[:-2].split("+") + ["+"] if chord.endswith("++") else chord.split("+")
    return [k.strip().lower() if len(k.strip()) > 1 else k.strip() for k in keys if k.strip()]


@dataclass
class ActionStep:
    """``{"action": ..., "action_space": ...}``: one agent action of a solution, run with ``env.step``."""

    action: Any
    action_space: str = "pyautogui"
    index: int = 0
    essential: bool = False

    kind: ClassVar[str] = "action"

    @property
    def is_gui(self) -> bool:
        """Whether it acts through the GUI (any action but WAIT/DONE/FAIL)."""
        action = self.action
        return not (isinstance(action, str) and action in ("WAIT", "DONE", "FAIL")) and not (
            isinstance(action, dict) and action.get("action_type") in ("WAIT", "DONE", "FAIL"))

    def to_action(self):
        """The step as the harness records it in traj.jsonl: the action as written."""
        return self.action


@dataclass
class ShellStep:
    """``{"command": ..., "shell": bool}``: a command of a solution run in the guest as user ``user``
    (an argv list, or a string run by ``sh -c`` when ``shell``); never essential, never GUI work."""

    command: str | list[str]
    shell: bool = False
    index: int = 0

    kind: ClassVar[str] = "command"
    essential: ClassVar[bool] = False
    is_gui: ClassVar[bool] = False

    def to_action(self) -> dict:
        """The step as the harness records it in traj.jsonl: ``{"command", "shell"}``."""
        return {"command": self.command, "shell": self.shell}


#: One step of a reference solution, as :func:`solution_items` reads it.
SolutionStep = ActionStep | ShellStep | GuiStep


def solution_items(task) -> list[SolutionStep]:
    """The task's reference solution as typed steps, read and checked against the rules above.

    Raises:
        TaskConfigError: no solution, a malformed item, or a rule broken (naming the item).
    """
    source = solution_source(task)
    where, items, from_sh = source.where, source.items, source.kind == "solution.sh"
    if not items:
        raise _err("has no reference solution (a `solution` list, a solution.sh beside it, or a kept solution "
                   "for its id in desktop_env/tasks/reference_solutions/)", where, "solution")
    if not isinstance(items, list):
        raise _err("must be a list", where, "solution")
    gui_task = "gui" in task.tags
    out = []
    for i, item in enumerate(items):
        field_ = "solution.sh" if from_sh else f"solution[{i}]"
        if not isinstance(item, dict):
            raise _err("must be an object with `action`, `command` or `gui`", where, field_)
        kinds = [k for k in ("action", "command", "gui") if k in item]
        if len(kinds) != 1:
            raise _err("needs exactly one of `action`, `command` or `gui`" +
                       (f", got {' and '.join(kinds)}" if kinds else ""), where, field_)
        kind = kinds[0]
        if "essential" in item and not isinstance(item["essential"], bool):
            raise _err(f"must be true or false, got {item['essential']!r}", where, f"{field_}.essential")
        if kind == "command":
            if gui_task:
                raise _err("is a command, but the task is tagged `gui`: solve it with GUI actions "
                           "(`gui` steps or pyautogui actions)", where, field_)
            if item.get("essential"):
                raise _err("is a command marked essential: essential marks the GUI steps of a `cli+gui` task",
                           where, f"{field_}.essential")
            out.append(ShellStep(item["command"], bool(item.get("shell", False)), i))
        elif kind == "gui":
            step = GuiStep.from_json(item, where, field_, index=i)
            if gui_task and step.opens_terminal():
                raise _err("opens or types into a terminal, which is not GUI work in a task tagged `gui`",
                           where, field_)
            out.append(step)
        else:
            code = item["action"]
            if gui_task and isinstance(code, str):
                bad = _FORBIDDEN_CODE.search(code) or _TERMINAL_CODE.search(code)
                if bad:
                    raise _err(f"uses {bad.group(0)!r}: a `gui` task's solution acts through input events only "
                               "(wait for a window or file with a {\"gui\": \"wait\", ...} step)", where, field_)
            out.append(ActionStep(code, item.get("action_space", "pyautogui"), i, item.get("essential", False)))
    if "cli+gui" in task.tags and not any(it.essential and it.is_gui for it in out):
        raise _err("a `cli+gui` task marks at least one GUI step `\"essential\": true` (tasks verify replays the "
                   "solution without them, which must score 0.0)", where, "solution")
    return out


def interface_of(task) -> str | None:
    """The task's interface tag (``gui``, ``cli`` or ``cli+gui``), or None when it has none."""
    from desktop_env.tasks.common import INTERFACES

    return next((t for t in task.tags if t in INTERFACES), None)


def needs_gui(task) -> bool:
    """Whether the task needs the desktop's GUI: tagged ``gui`` or ``cli+gui``, or not tagged at all (the
    general computer-use suite tags no interface, and every one of its tasks is desktop work). Only a task
    tagged ``cli`` can be done without the GUI."""
    return interface_of(task) != "cli"
