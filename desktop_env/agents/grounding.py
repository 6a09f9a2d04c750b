"""Open grounding models in their own action grammars, over any OpenAI-compatible endpoint (vLLM, ...).

``--agent ui-tars``: the UI-TARS grammar, a ``Thought:`` then ``Action:`` lines such as
``click(start_box='(x,y)')``, ``drag(start_box=..., end_box=...)``, ``hotkey(key='ctrl c')``,
``type(content='...')``, ``scroll(start_box=..., direction='down')``, ``wait()``, ``finished()``;
points may also be written ``<|box_start|>(x,y)<|box_end|>``, ``<point>x y</point>`` or as a box
``(x1,y1,x2,y2)`` (its centre). ``--coords grid1000`` (default) reads them on a 0-1000 grid over
the screenshot, ``--coords pixels`` as pixels of the screenshot the model received.

``--agent qwen-vl``: the Qwen-VL computer-use style, ``<tool_call>`` JSON calling the function
``computer_use`` with an ``action`` and a ``coordinate`` in pixels of the image the model received.

Both models see images resized to multiples of 28 pixels (``smart_resize``, as their processors
do); the screenshot is sent at that size already, so the server does not resize it again and the
coordinates map back exactly. A reply with no usable action is a parse error and counts as a step.
"""
from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

from desktop_env.agents.computer_use import InvalidToolUse
from desktop_env.agents.llm import LLMAgent
from desktop_env.agents.openai_computer import openai_key
from desktop_env.agents.parsing import ParseError, ScreenMapping
from desktop_env.errors import DesktopEnvError

GRAMMARS = ("ui-tars", "qwen-vl")
COORDS = ("grid1000", "pixels")
#: The image side unit of Qwen-VL-style vision encoders, and their default pixel bounds.
PATCH = 28
MIN_PIXELS, MAX_PIXELS = 4 * PATCH * PATCH, 16384 * PATCH * PATCH
#: One wheel click per this many pixels of a Qwen-VL ``scroll``; UI-TARS scrolls this many clicks.
SCROLL_PX_PER_CLICK = 100
UI_TARS_SCROLL_CLICKS = 5
WAIT_S = 5.0

UI_TARS_PROMPT = """You are a GUI agent. You are given a task and a screenshot of a Linux desktop ({w}x{h}). \
Perform the next action to complete the task.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='(x1,y1)')
left_double(start_box='(x1,y1)')
right_single(start_box='(x1,y1)')
drag(start_box='(x1,y1)', end_box='(x2,y2)')
hotkey(key='ctrl c') # keys separated by spaces, lowercase
type(content='xxx') # end content with \\n to submit
scroll(start_box='(x1,y1)', direction='down or up or right or left')
wait() # sleep 5 s and take a screenshot
finished(content='xxx') # the task is done
call_user() # the task cannot be done

## Note
- Coordinates are {coords}.
- Write a short Thought, then one Action.
"""
QWEN_PROMPT = """You operate a Linux desktop through one function. The screen is {w}x{h} pixels.

# Tools
<tools>
{{"type": "function", "function": {{"name": "computer_use", "description": "Use a mouse and keyboard to interact \
with the computer, and take screenshots.", "parameters": {{"properties": {{"action": {{"enum": ["key", "type", \
"mouse_move", "left_click", "left_click_drag", "right_click", "middle_click", "double_click", "triple_click", \
"scroll", "hscroll", "wait", "terminate"], "type": "string"}}, "keys": {{"type": "array"}}, "text": {{"type": "string"}}, \
"coordinate": {{"type": "array", "description": "(x, y) in pixels of the screenshot"}}, "pixels": {{"type": "number", \
"description": "scroll amount; positive scrolls up"}}, "time": {{"type": "number"}}, "status": {{"enum": \
["success", "failure"], "type": "string"}}}}, "required": ["action"], "type": "object"}}}}}}
</tools>

For each function call, return a JSON object with the function name and arguments within <tool_call></tool_call> \
XML tags. Call terminate with status success when the task is done, failure when it cannot be done."""


def smart_resize(width: int, height: int, factor: int = PATCH, min_pixels: int = MIN_PIXELS,
                 max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """The size Qwen-VL-style processors give an image: each side a multiple of ``factor``, close to the
    original, the area within ``[min_pixels, max_pixels]``; returns (width, height)."""
    w = max(factor, round(width / factor) * factor)
    h = max(factor, round(height / factor) * factor)
    if w * h > max_pixels:
        beta = math.sqrt(width * height / max_pixels)
        w = max(factor, math.floor(width / beta / factor) * factor)
        h = max(factor, math.floor(height / beta / factor) * factor)
    elif w * h < min_pixels:
        beta = math.sqrt(min_pixels / (width * height))
        w = math.ceil(width * beta / factor) * factor
        h = math.ceil(height * beta / factor) * factor
    return w, h


class GroundingAgent(LLMAgent):
    """A grounding model answering in the UI-TARS or the Qwen-VL grammar (see the module docstring).

    Args:
        model: the model name served at ``base_url``.
        grammar: ``ui-tars`` or ``qwen-vl``.
        coords: for UI-TARS, ``grid1000`` (default) or ``pixels``.
        Other options as :class:`llm.LLMAgent` (the observation is the screenshot).
    """

    def __init__(self, model: str, grammar: str = "ui-tars", coords: str = "grid1000", **options: Any):
        if grammar not in GRAMMARS:
            raise DesktopEnvError(f"unknown grounding grammar {grammar!r} (known: {', '.join(GRAMMARS)})")
        if coords not in COORDS:
            raise DesktopEnvError(f"unknown coordinate convention {coords!r} (known: {', '.join(COORDS)})")
        if options.get("action_space", "pyautogui") != "pyautogui":
            raise DesktopEnvError("grounding agents run their actions as pyautogui code: use --action_space pyautogui")
        options["observation_type"] = "screenshot"
        super().__init__(model, **options)
        self.grammar, self.coords = grammar, coords

    def model_size(self, screen: tuple[int, int]) -> tuple[int, int]:
        return smart_resize(*super().model_size(screen))

    def system_text(self, mapping: ScreenMapping) -> str:
        w, h = mapping.model
        if self.grammar == "qwen-vl":
            return QWEN_PROMPT.format(w=w, h=h)
        coords = ("on a 0-1000 grid over the screenshot (0,0 top left, 1000,1000 bottom right)"
                  if self.coords == "grid1000" else f"pixels of the {w}x{h} screenshot")
        return UI_TARS_PROMPT.format(w=w, h=h, coords=coords)

    def actions_from(self, text: str, mapping: ScreenMapping, centres: dict | None) -> list:
        try:
            return qwen_actions(text, mapping) if self.grammar == "qwen-vl" else \
                ui_tars_actions(text, mapping, self.coords)
        except InvalidToolUse as exc:
            raise ParseError(str(exc)) from exc


# -- UI-TARS ---------------------------------------------------------------------------------------
def ui_tars_actions(text: str, mapping: ScreenMapping, coords: str = "grid1000") -> list:
    """The env actions of a UI-TARS reply (its ``Action:`` part).

    Raises:
        ParseError: no ``Action:``, or it does not parse as calls.
        InvalidToolUse: an unknown action, a missing or off-screen point.
    """
    found = re.search(r"Action:\s*(.*)", text or "", re.DOTALL)
    if not found:
        raise ParseError("the reply has no `Action:` line (UI-TARS format: Thought: ... then Action: click(...))")
    source = found.group(1).strip().strip("`").strip()
    try:
        calls = [node.value for node in ast.parse(source).body]
    except SyntaxError as exc:
        raise ParseError(f"the Action does not parse as calls: {exc.msg} in {source[:200]!r}") from exc
    actions = []
    for call in calls:
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            raise ParseError(f"not an action call: {ast.unparse(call)[:200]!r}")
        try:
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            args = [ast.literal_eval(a) for a in call.args]
        except ValueError as exc:
            raise ParseError(f"the arguments of {call.func.id} must be literals: {ast.unparse(call)[:200]!r}") from exc
        actions.append(_ui_tars_one(call.func.id, args, kwargs, mapping, coords))
    if not actions:
        raise ParseError("the `Action:` is empty")
    return actions


def _ui_tars_point(value: Any, mapping: ScreenMapping, coords: str) -> tuple[int, int]:
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", str(value))] if value is not None else []
    if len(numbers) == 4:  # a box: its centre
        numbers = [(numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2]
    if len(numbers) != 2:
        raise InvalidToolUse(f"a point must be '(x,y)' or a box '(x1,y1,x2,y2)', got {value!r}")
    x, y = numbers
    w, h = mapping.model
    if coords == "grid1000":
        if not (0 <= x <= 1000 and 0 <= y <= 1000):
            raise InvalidToolUse(f"point ({x:g},{y:g}) is off the 0-1000 grid")
        x, y = min(x / 1000 * w, w - 1), min(y / 1000 * h, h - 1)
    elif not (0 <= x < w and 0 <= y < h):
        raise InvalidToolUse(f"point ({x:g},{y:g}) is off the {w}x{h} screenshot")
    return mapping.to_screen(x, y)


def _ui_tars_one(name: str, args: list, kw: dict, mapping: ScreenMapping, coords: str) -> Any:
    def point(*keys):
        value = next((kw[k] for k in keys if k in kw), args[0] if args else None)
        return _ui_tars_point(value, mapping, coords)

    if name in ("click", "left_single", "left_double", "right_single", "hover", "mouse_move"):
        x, y = point("start_box", "point", "start_point")
        if name in ("hover", "mouse_move"):
            return f"pyautogui.moveTo({x}, {y})"
        clicks, button = (2, "left") if name == "left_double" else (1, "right" if name == "right_single" else "left")
        return f"pyautogui.click({x}, {y}, clicks={clicks}, interval=0.1, button={button!r})"
    if name in ("drag", "select"):
        sx, sy = point("start_box", "start_point")
        ex, ey = _ui_tars_point(kw.get("end_box", kw.get("end_point")), mapping, coords)
        return f"pyautogui.moveTo({sx}, {sy})\npyautogui.dragTo({ex}, {ey}, duration=0.5, button='left')"
    if name in ("hotkey", "press"):
        keys = str(kw.get("key", kw.get("hotkey", args[0] if args else ""))).split()
        if not keys:
            raise InvalidToolUse(f"{name} needs key='...'")
        return f"pyautogui.hotkey({', '.join(repr(openai_key(k)) for k in keys)})"
    if name == "type":
        content = kw.get("content", args[0] if args else None)
        if not isinstance(content, str):
            raise InvalidToolUse("type needs content='...'")
        return f"pyautogui.write({content!r})"
    if name == "scroll":
        direction = kw.get("direction", "down")
        if direction not in ("up", "down", "left", "right"):
            raise InvalidToolUse(f"scroll direction must be up, down, left or right, got {direction!r}")
        head = "pyautogui.moveTo({}, {})\n".format(*point("start_box", "point")) \
            if any(k in kw for k in ("start_box", "point")) else ""
        clicks = UI_TARS_SCROLL_CLICKS if direction in ("up", "left") else -UI_TARS_SCROLL_CLICKS
        return head + f"pyautogui.{'scroll' if direction in ('up', 'down') else 'hscroll'}({clicks})"
    if name == "wait":
        return {"action_type": "WAIT", "seconds": WAIT_S}
    if name == "finished":
        return "DONE"
    if name == "call_user":
        return "FAIL"
    raise InvalidToolUse(f"unknown action {name!r} (click, left_double, right_single, drag, hotkey, type, scroll, "
                         "wait, finished, call_user)")


# -- Qwen-VL ---------------------------------------------------------------------------------------
def qwen_actions(text: str, mapping: ScreenMapping) -> list:
    """The env actions of the ``<tool_call>`` blocks of a Qwen-VL-style reply.

    Raises:
        ParseError: no ``<tool_call>`` block, or one that is not JSON.
        InvalidToolUse: an unknown function or action, a missing or off-screen coordinate.
    """
    blocks = re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", text or "", re.DOTALL)
    if not blocks:
        raise ParseError("the reply has no <tool_call>{...}</tool_call> block")
    actions = []
    for raw in blocks:
        try:
            call = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ParseError(f"a <tool_call> is not JSON ({exc.msg}): {raw[:200]!r}") from exc
        if not isinstance(call, dict) or call.get("name") not in ("computer_use", "computer"):
            raise InvalidToolUse(f"unknown function {call.get('name') if isinstance(call, dict) else call!r} "
                                 "(only computer_use)")
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                raise ParseError(f"the arguments are not JSON: {arguments[:200]!r}") from exc
        actions.append(_qwen_one(arguments if isinstance(arguments, dict) else {}, mapping))
    return actions


def _qwen_one(a: dict, mapping: ScreenMapping) -> Any:
    kind = a.get("action")

    def point() -> tuple[int, int]:
        c = a.get("coordinate")
        w, h = mapping.model
        if (not isinstance(c, (list, tuple)) or len(c) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in c)):
            raise InvalidToolUse(f"{kind} needs `coordinate` [x, y] in pixels of the {w}x{h} screenshot, got {c!r}")
        if not (0 <= c[0] < w and 0 <= c[1] < h):
            raise InvalidToolUse(f"{kind}: coordinate {list(c)} is off the {w}x{h} screenshot")
        return mapping.to_screen(*c)

    clicks = {"left_click": (1, "left"), "right_click": (1, "right"), "middle_click": (1, "middle"),
              "double_click": (2, "left"), "triple_click": (3, "left")}
    if kind in clicks:
        n, button = clicks[kind]
        return "pyautogui.click({}, {}, clicks={}, interval=0.1, button={!r})".format(*point(), n, button)
    if kind == "mouse_move":
        return "pyautogui.moveTo({}, {})".format(*point())
    if kind == "left_click_drag":  # from where the pointer is
        return "pyautogui.dragTo({}, {}, duration=0.5, button='left')".format(*point())
    if kind == "key":
        keys = a.get("keys") or []
        if not isinstance(keys, list) or not keys:
            raise InvalidToolUse("key needs `keys`, a list such as ['ctrl', 'c']")
        return f"pyautogui.hotkey({', '.join(repr(openai_key(k)) for k in keys)})"
    if kind == "type":
        if not isinstance(a.get("text"), str):
            raise InvalidToolUse("type needs `text`")
        return f"pyautogui.write({a['text']!r})"
    if kind in ("scroll", "hscroll"):
        pixels = a.get("pixels")
        if not isinstance(pixels, (int, float)) or isinstance(pixels, bool) or not pixels:
            raise InvalidToolUse(f"{kind} needs non-zero `pixels`, got {pixels!r}")
        n = max(1, round(abs(pixels) / SCROLL_PX_PER_CLICK)) * (1 if pixels > 0 else -1)
        head = "pyautogui.moveTo({}, {})\n".format(*point()) if a.get("coordinate") is not None else ""
        return head + f"pyautogui.{kind}({n})"
    if kind == "wait":
        seconds = a.get("time", WAIT_S)
        if not isinstance(seconds, (int, float)) or not 0 <= seconds <= 60:
            raise InvalidToolUse(f"wait `time` must be 0..60 seconds, got {seconds!r}")
        return {"action_type": "WAIT", "seconds": float(seconds)}
    if kind == "terminate":
        return "DONE" if a.get("status", "success") == "success" else "FAIL"
    raise InvalidToolUse(f"unknown action {kind!r} (left_click, right_click, double_click, mouse_move, "
                         "left_click_drag, key, type, scroll, wait, terminate, ...)")
