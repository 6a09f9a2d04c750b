"""Model replies -> actions: code/JSON block extraction (never splitting inside strings), coordinate mapping, action structs."""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from desktop_env.actions import COMPUTER_13, SPECIAL, InvalidAction, parse_action

#: A fenced block: ```lang\n body ```; the language tag is optional.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.DOTALL)
#: WAIT/DONE/FAIL alone on a line (optionally in backticks or followed by a full stop).
_BARE_SPECIAL = re.compile(r"^[ \t>*`]*(WAIT|DONE|FAIL)[`*.!]*[ \t]*$", re.MULTILINE)
_TAG = re.compile(r"^tag_(\d+)$")
_PYTHON_LANGS = ("", "python", "python3", "py")

#: pyautogui functions whose arguments 0 and 1 (or x=, y=) are screen coordinates.
_ABSOLUTE = {"click", "doubleClick", "tripleClick", "rightClick", "middleClick", "moveTo", "dragTo",
             "mouseDown", "mouseUp"}
#: ... whose arguments 0 and 1 (or xOffset=, yOffset=) are distances.
_RELATIVE = {"moveRel", "dragRel", "move", "drag"}
#: ... whose arguments 1 and 2 (or x=, y=) are coordinates (argument 0 is the amount).
_SCROLLS = {"scroll", "hscroll", "vscroll"}
_STRUCT_TYPES = {"click": "CLICK", "doubleClick": "DOUBLE_CLICK", "tripleClick": "CLICK", "rightClick": "RIGHT_CLICK",
                 "middleClick": "CLICK", "moveTo": "MOVE_TO", "moveRel": "MOVE_TO", "move": "MOVE_TO",
                 "dragTo": "DRAG_TO", "dragRel": "DRAG_TO", "drag": "DRAG_TO", "mouseDown": "MOUSE_DOWN",
                 "mouseUp": "MOUSE_UP", "scroll": "SCROLL", "hscroll": "SCROLL", "vscroll": "SCROLL",
                 "write": "TYPING", "typewrite": "TYPING", "press": "PRESS", "keyDown": "KEY_DOWN",
                 "keyUp": "KEY_UP", "hotkey": "HOTKEY"}


class ParseError(ValueError):
    """A model reply holds no usable action; the message says what was expected."""


# -- screen mapping ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScreenMapping:
    """The model sees a ``model`` sized screen; actions run on the ``screen`` sized one.

    Coordinates scale linearly per axis (the model size keeps the screen's aspect ratio,
    see :func:`fit_screen`) and are rounded and clamped onto the real screen.
    """

    model: tuple[int, int]
    screen: tuple[int, int]

    @property
    def identity(self) -> bool:
        return tuple(self.model) == tuple(self.screen)

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """A model-space point on the real screen (clamped inside it)."""
        sx = round(x * self.screen[0] / self.model[0])
        sy = round(y * self.screen[1] / self.model[1])
        return min(max(sx, 0), self.screen[0] - 1), min(max(sy, 0), self.screen[1] - 1)

    def to_model(self, x: float, y: float) -> tuple[int, int]:
        """A real-screen point in model space (what the model is shown)."""
        return round(x * self.model[0] / self.screen[0]), round(y * self.model[1] / self.screen[1])

    def scale_delta(self, dx: float, dy: float) -> tuple[int, int]:
        """A model-space distance on the real screen (not clamped)."""
        return round(dx * self.screen[0] / self.model[0]), round(dy * self.screen[1] / self.model[1])

    def to_json(self) -> dict:
        return {"model": list(self.model), "screen": list(self.screen)}


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x720"`` -> (1280, 720); raises ValueError naming the expected form."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX*]\s*(\d+)\s*", text or "")
    if not m or int(m.group(1)) < 16 or int(m.group(2)) < 16:
        raise ValueError(f"screen size {text!r} must look like WIDTHxHEIGHT, e.g. 1280x720")
    return int(m.group(1)), int(m.group(2))


def fit_screen(screen: tuple[int, int], box: tuple[int, int]) -> tuple[int, int]:
    """The largest size inside ``box`` with ``screen``'s aspect ratio, never larger than ``screen``."""
    scale = min(box[0] / screen[0], box[1] / screen[1], 1.0)
    return max(1, round(screen[0] * scale)), max(1, round(screen[1] * scale))


# -- extraction ----------------------------------------------------------------------------------
def extract_actions(response: str, action_space: str, model_screen: tuple[int, int] | None = None,
                    tags: dict[int, tuple[int, int]] | None = None) -> list:
    """The actions a model reply asks for, in order, in model-space coordinates.

    pyautogui: each fenced code block is one action, kept whole (a block is never split on
    ``;`` or newlines, so ``typewrite("a; b")`` and SQL survive); a block that is just
    WAIT/DONE/FAIL, or a top-level statement ``DONE`` inside a block, becomes that action
    (statements are separated with ``ast``, never by text). computer_13: each ```json block
    (an object or a list of objects) gives its actions; a reply that is bare JSON also works.
    Without any block, a line holding only WAIT, DONE or FAIL is that action.

    Args:
        response: the model's raw text.
        action_space: ``pyautogui`` or ``computer_13``.
        model_screen: the screen size the model sees (validates computer_13 coordinates).
        tags: set-of-marks element centres (model space) that ``tag_N`` may name.

    Raises:
        ParseError: no action found, a block that is not valid Python/JSON, or an invalid action.
    """
    if not isinstance(response, str) or not response.strip():
        raise ParseError("the reply is empty")
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(response)]
    actions: list = []
    if action_space == "pyautogui":
        for lang, body in blocks:
            if lang not in _PYTHON_LANGS:  # ```bash or ```json blocks are explanations, not actions
                continue
            actions.extend(_python_block(body, tags))
    elif action_space == "computer_13":
        for lang, body in blocks:
            if lang not in ("", "json", "json5"):
                continue
            actions.extend(_json_block(body, model_screen, tags))
        if not blocks:
            stripped = response.strip()
            start = stripped.find("{") if stripped.find("{") >= 0 else stripped.find("[")
            if start >= 0 and _BARE_SPECIAL.search(stripped[:start]) is None:
                try:
                    value, _ = json.JSONDecoder().raw_decode(stripped[start:])
                except json.JSONDecodeError:
                    value = None
                if value is not None:
                    actions.extend(_json_actions(value, model_screen, tags))
    else:
        raise ParseError(f"unknown action space {action_space!r}")
    if not actions:
        specials = _BARE_SPECIAL.findall(_FENCE.sub("", response))
        if specials:
            return [specials[-1]]
        what = "a ```python block of pyautogui code" if action_space == "pyautogui" else "a ```json action object"
        raise ParseError(f"no action found: expected {what}, or WAIT, DONE or FAIL on a line of its own")
    return actions


def _python_block(body: str, tags) -> list:
    code = body.strip()
    if not code:
        return []
    if code.strip("`*. ").upper() in SPECIAL and code.strip("`*. ").isupper():
        return [code.strip("`*. ")]
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ParseError(f"a code block is not valid Python: {exc.msg} (line {exc.lineno}): {code[:200]!r}") from exc
    out, pending = [], []
    for stmt in tree.body:
        name = stmt.value.id if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) else None
        if name in SPECIAL:
            if pending:
                out.append(_segment(code, pending))
                pending = []
            out.append(name)
        else:
            pending.append(stmt)
    if pending:
        out.append(code if len(pending) == len(tree.body) else _segment(code, pending))
    if tags:
        out = [substitute_tags(a, tags) if a not in SPECIAL else a for a in out]
    return out


def _segment(code: str, stmts: list[ast.stmt]) -> str:
    return "\n".join(ast.get_source_segment(code, s) or ast.unparse(s) for s in stmts)


def _json_block(body: str, model_screen, tags) -> list:
    text = body.strip()
    if not text:
        return []
    if text.upper() in SPECIAL:
        return [text.upper()]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"a JSON block does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}: "
                         f"{text[:200]!r}") from exc
    return _json_actions(value, model_screen, tags)


def _json_actions(value: Any, model_screen, tags) -> list:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and item.strip().upper() in SPECIAL:
            out.append(item.strip().upper())
            continue
        if not isinstance(item, dict) or "action_type" not in item:
            raise ParseError(f"a computer_13 action is an object with an action_type, got {item!r:.200}")
        action = dict(item)
        action["action_type"] = str(action["action_type"]).upper()
        if action["action_type"] not in COMPUTER_13:
            raise ParseError(f"unknown action_type {item['action_type']!r} (use one of {', '.join(COMPUTER_13)})")
        if "tag" in action:
            tag = action.pop("tag")
            m = _TAG.match(str(tag)) if not isinstance(tag, int) else None
            n = tag if isinstance(tag, int) else (int(m.group(1)) if m else None)
            if not tags or n not in tags:
                raise ParseError(f"{action['action_type']} names tag {tag!r}, which is not among the marked elements")
            action["x"], action["y"] = tags[n]
        if model_screen is not None:
            try:
                parse_action(action, "computer_13", model_screen)
            except InvalidAction as exc:
                raise ParseError(str(exc)) from exc
        out.append(action)
    return out


def substitute_tags(code: str, tags: dict[int, tuple[int, int]]) -> str:
    """Replace the names ``tag_N`` in pyautogui code by the element's centre ``(x, y)``.

    Raises:
        ParseError: the code names a tag that was not marked.
    """
    tree = ast.parse(code)
    used = False

    class Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            nonlocal used
            m = _TAG.match(node.id)
            if not m:
                return node
            n = int(m.group(1))
            if n not in tags:
                raise ParseError(f"the code names {node.id}, which is not among the marked elements")
            used = True
            return ast.copy_location(ast.Tuple([ast.Constant(tags[n][0]), ast.Constant(tags[n][1])], ast.Load()),
                                     node)

    tree = Sub().visit(tree)
    return ast.unparse(tree) if used else code


# -- mapping model coordinates onto the screen ---------------------------------------------------
def map_action(action, mapping: ScreenMapping):
    """``action`` with its model-space coordinates moved onto the real screen.

    pyautogui code: numeric x/y arguments of click/moveTo/dragTo/... (positional, keyword
    or an ``(x, y)`` tuple) are rewritten through ``ast``; other code is returned unchanged.
    computer_13: the ``x``/``y`` fields.
    """
    if mapping.identity or action in SPECIAL:
        return action
    if isinstance(action, dict):
        if "x" in action and "y" in action and _is_num(action["x"]) and _is_num(action["y"]):
            mapped = dict(action)
            mapped["x"], mapped["y"] = mapping.to_screen(action["x"], action["y"])
            return mapped
        return action
    if not isinstance(action, str):
        return action
    try:
        tree = ast.parse(action)
    except SyntaxError:
        return action
    changed = False

    def num(node):
        if isinstance(node, ast.Constant) and _is_num(node.value):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and _is_num(node.operand.value):
            return -node.operand.value
        return None

    def pair(xn, yn, relative):
        nonlocal changed
        x, y = num(xn), num(yn)
        if x is None or y is None:
            return None
        changed = True
        nx, ny = mapping.scale_delta(x, y) if relative else mapping.to_screen(x, y)
        return ast.Constant(nx), ast.Constant(ny)

    class Mapper(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            fname = _pyautogui_func(node)
            if fname is None or not (fname in _ABSOLUTE or fname in _RELATIVE or fname in _SCROLLS):
                return node
            relative = fname in _RELATIVE
            first = 1 if fname in _SCROLLS else 0
            xkey, ykey = ("xOffset", "yOffset") if relative else ("x", "y")
            args = node.args
            if len(args) > first and isinstance(args[first], (ast.Tuple, ast.List)) and len(args[first].elts) == 2:
                new = pair(*args[first].elts, relative)
                if new:
                    args[first] = ast.Tuple(list(new), ast.Load())
            elif len(args) > first + 1:
                new = pair(args[first], args[first + 1], relative)
                if new:
                    args[first], args[first + 1] = new
            kw = {k.arg: k for k in node.keywords}
            if xkey in kw and ykey in kw:
                new = pair(kw[xkey].value, kw[ykey].value, relative)
                if new:
                    kw[xkey].value, kw[ykey].value = new
            return node

    tree = Mapper().visit(tree)
    return ast.unparse(tree) if changed else action


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _pyautogui_func(node: ast.Call) -> str | None:
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "pyautogui":
        return f.attr
    return None


# -- structured view of an action ----------------------------------------------------------------
def action_struct(action) -> dict:
    """What an action does, as far as can be told: ``{"type", "x", "y", "path", "text", "keys"}``.

    ``type`` is a computer_13 name (CLICK, TYPING, DRAG_TO, HOTKEY, ...), WAIT/DONE/FAIL,
    COMMAND for a guest command, GUI_STEP for a reference solution's GUI step, PYAUTOGUI for code doing several things or things
    not recognised (then ``path`` lists every point it touches, ``text`` all it types and
    ``keys`` all keys it presses). Unknown fields are None.
    """
    out: dict[str, Any] = {"type": None, "x": None, "y": None, "path": None, "text": None, "keys": None}
    if action is None:
        return out
    if isinstance(action, str) and action.strip().upper() in SPECIAL:
        out["type"] = action.strip().upper()
        return out
    if isinstance(action, dict):
        if "command" in action:
            cmd = action["command"]
            out.update(type="COMMAND", text=cmd if isinstance(cmd, str) else " ".join(map(str, cmd)))
            return out
        if "gui_step" in action:  # a reference solution's GUI step; what it did is in the step's info
            step = action["gui_step"] if isinstance(action["gui_step"], dict) else {}
            out.update(type="GUI_STEP", text=step.get("text"), keys=step.get("keys"))
            return out
        kind = str(action.get("action_type", "")).upper() or None
        out["type"] = kind
        if _is_num(action.get("x")) and _is_num(action.get("y")):
            out["x"], out["y"] = action["x"], action["y"]
            if kind == "DRAG_TO":
                out["path"] = [[action["x"], action["y"]]]
        if "text" in action:
            out["text"] = action["text"]
        if "keys" in action:
            out["keys"] = list(action["keys"]) if isinstance(action["keys"], (list, tuple)) else [action["keys"]]
        elif "key" in action:
            out["keys"] = [action["key"]]
        return out
    if not isinstance(action, str):
        return out
    try:
        tree = ast.parse(action)
    except SyntaxError:
        out["type"] = "PYAUTOGUI"
        return out
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _pyautogui_func(node)
            if name in _STRUCT_TYPES:
                calls.append((node.lineno, node.col_offset, name, node))
    calls.sort(key=lambda c: (c[0], c[1]))
    points, texts, keys = [], [], []
    for _, _, name, node in calls:
        literal = [_literal(a) for a in node.args]
        kwargs = {k.arg: _literal(k.value) for k in node.keywords if k.arg}
        first = 1 if name in _SCROLLS else 0
        x, y = kwargs.get("x"), kwargs.get("y")
        if len(literal) > first and isinstance(literal[first], tuple) and len(literal[first]) == 2:
            x, y = literal[first]
        elif len(literal) > first + 1 and (name in _ABSOLUTE or name in _SCROLLS):
            x, y = literal[first], literal[first + 1]
        if _is_num(x) and _is_num(y) and name not in _RELATIVE:
            points.append([x, y])
        if name in ("write", "typewrite"):
            value = literal[0] if literal else kwargs.get("message")
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, (list, tuple)):
                keys.extend(str(k) for k in value)
        elif name in ("press", "keyDown", "keyUp"):
            value = literal[0] if literal else kwargs.get("keys", kwargs.get("key"))
            keys.extend([value] if isinstance(value, str) else [str(k) for k in value or []])
        elif name == "hotkey":
            keys.extend(str(k) for k in literal if isinstance(k, str))
    if len(calls) == 1:
        out["type"] = _STRUCT_TYPES[calls[0][2]]
        if points:
            out["x"], out["y"] = points[-1]
        if out["type"] == "DRAG_TO" and points:
            out["path"] = points
    else:
        out["type"] = "PYAUTOGUI"
        if points:
            out["path"] = points
    out["text"] = "".join(texts) if texts else None
    out["keys"] = keys or None
    return out


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
