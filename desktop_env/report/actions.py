"""Structured actions (``action_struct``) derived from a trajectory's raw actions, for drawing and counting."""
from __future__ import annotations

import ast
import logging
from typing import Any

logger = logging.getLogger(__name__)

#: pyautogui function name -> the structured type it maps to.
_PYAUTOGUI_TYPES = {
    "click": "CLICK", "leftClick": "CLICK", "doubleClick": "DOUBLE_CLICK", "tripleClick": "TRIPLE_CLICK",
    "rightClick": "RIGHT_CLICK", "middleClick": "CLICK", "moveTo": "MOVE_TO", "moveRel": "MOVE_TO",
    "move": "MOVE_TO", "dragTo": "DRAG_TO", "dragRel": "DRAG_TO", "drag": "DRAG_TO",
    "write": "TYPING", "typewrite": "TYPING", "hotkey": "HOTKEY", "press": "PRESS",
    "keyDown": "KEY_DOWN", "keyUp": "KEY_UP", "mouseDown": "MOUSE_DOWN", "mouseUp": "MOUSE_UP",
    "scroll": "SCROLL", "hscroll": "SCROLL", "vscroll": "SCROLL",
}
_RELATIVE = {"moveRel", "move", "dragRel", "drag"}
_POINTER_TYPES = {"CLICK", "DOUBLE_CLICK", "TRIPLE_CLICK", "RIGHT_CLICK", "MOVE_TO", "DRAG_TO",
                  "MOUSE_DOWN", "MOUSE_UP", "SCROLL"}


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _pyautogui_call(call: ast.Call, cursor: list) -> dict | None:
    """One ``pyautogui.<fn>(...)`` call as a structured action; ``cursor`` ([x, y] or [None, None]) is updated."""
    fn = call.func
    if not (isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id == "pyautogui"):
        return None
    kind = _PYAUTOGUI_TYPES.get(fn.attr)
    if kind is None:
        return {"type": "PYAUTOGUI", "text": ast.unparse(call)}
    args = [_literal(a) for a in call.args]
    kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
    out: dict[str, Any] = {"type": kind}
    if kind in _POINTER_TYPES:
        x, y = kwargs.get("x"), kwargs.get("y")
        if kind == "SCROLL":
            out["clicks"] = args[0] if args else kwargs.get("clicks")
            x, y = (args[1] if len(args) > 1 else x), (args[2] if len(args) > 2 else y)
        elif args:
            if isinstance(args[0], (tuple, list)) and len(args[0]) == 2:
                x, y = args[0]
            else:
                x = args[0]
                y = args[1] if len(args) > 1 else y
        x, y = _number(x), _number(y)
        if fn.attr in _RELATIVE and x is not None and y is not None and cursor[0] is not None:
            x, y = cursor[0] + x, cursor[1] + y
        elif fn.attr in _RELATIVE:
            x = y = None
        start = list(cursor)
        if x is not None and y is not None:
            out["x"], out["y"] = x, y
            if kind == "DRAG_TO" and start[0] is not None:
                out["path"] = [start, [x, y]]
            cursor[:] = [x, y]
        elif start[0] is not None and kind != "DRAG_TO":
            out["x"], out["y"] = start  # a click without coordinates happens where the pointer is
    elif kind == "TYPING":
        text = args[0] if args else kwargs.get("message")
        out["text"] = "".join(text) if isinstance(text, list) else (text if isinstance(text, str) else None)
    else:  # HOTKEY, PRESS, KEY_DOWN, KEY_UP
        keys: list = []
        for a in args:
            keys.extend(a if isinstance(a, list) else [a])
        if "keys" in kwargs:
            k = kwargs["keys"]
            keys.extend(k if isinstance(k, list) else [k])
        out["keys"] = [str(k) for k in keys if k is not None]
    return out


def parse_pyautogui(code: str, cursor: list | None = None) -> list[dict]:
    """Structured parts of a pyautogui code string, in execution order.

    Recognises click/doubleClick/rightClick/moveTo/dragTo/write/typewrite/hotkey/press/scroll
    (and the rel/down/up variants) with literal arguments; other pyautogui calls become a
    ``PYAUTOGUI`` part holding their source. Code that does not parse gives one
    ``PYAUTOGUI`` part with the whole text.

    Args:
        code: the action as the agent sent it.
        cursor: ``[x, y]`` of the pointer before the code runs (updated in place); drags
            start there.
    """
    cursor = cursor if cursor is not None else [None, None]
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [{"type": "PYAUTOGUI", "text": code}]
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            part = _pyautogui_call(node, cursor)
            if part is not None:
                parts.append((node.lineno, node.col_offset, part))
    # ast.walk is breadth-first; calls in a statement list are sorted back into source order
    parts.sort(key=lambda p: (p[0], p[1]))
    return [p[2] for p in parts] or [{"type": "PYAUTOGUI", "text": code}]


def _computer13(action: dict, cursor: list) -> dict:
    kind = str(action.get("action_type", "")).upper() or "UNKNOWN"
    out: dict[str, Any] = {"type": kind}
    x, y = _number(action.get("x")), _number(action.get("y"))
    if kind == "TYPING":
        out["text"] = action.get("text")
    elif kind in ("HOTKEY", "PRESS", "KEY_DOWN", "KEY_UP"):
        keys = action.get("keys", action.get("key"))
        out["keys"] = [str(k) for k in (keys if isinstance(keys, list) else [keys]) if k is not None]
    elif kind == "SCROLL":
        out["clicks"] = action.get("dy", action.get("clicks"))
    elif kind == "WAIT" and "seconds" in action:
        out["seconds"] = action["seconds"]
    if x is not None and y is not None:
        if kind == "DRAG_TO" and cursor[0] is not None:
            out["path"] = [list(cursor), [x, y]]
        out["x"], out["y"] = x, y
        cursor[:] = [x, y]
    elif kind in ("CLICK", "DOUBLE_CLICK", "RIGHT_CLICK", "MOUSE_DOWN", "MOUSE_UP") and cursor[0] is not None:
        out["x"], out["y"] = cursor
    return out


def action_parts(action: Any, cursor: list | None = None) -> list[dict]:
    """Every structured part of one raw action (a pyautogui string, a computer_13 dict,
    ``DONE``/``FAIL``/``WAIT``, or a harness ``{"command": ...}``), in order."""
    cursor = cursor if cursor is not None else [None, None]
    if action is None:  # a turn whose reply gave no action
        return [{"type": "NONE"}]
    if isinstance(action, str):
        word = action.strip().upper()
        if word in ("DONE", "FAIL", "WAIT"):
            return [{"type": word}]
        return parse_pyautogui(action, cursor)
    if isinstance(action, dict):
        if "command" in action:
            command = action["command"]
            return [{"type": "COMMAND", "text": command if isinstance(command, str) else " ".join(map(str, command))}]
        if "action_type" in action:
            return [_computer13(action, cursor)]
    return [{"type": "UNKNOWN", "text": str(action)}]


def summarize(parts: list[dict]) -> dict:
    """One ``action_struct`` for a step from its parts: the single part itself, else a
    ``PYAUTOGUI`` record with the last pointer position, all typed text and keys, and the parts."""
    if len(parts) == 1:
        return dict(parts[0])
    out: dict[str, Any] = {"type": "PYAUTOGUI", "parts": parts}
    for p in parts:
        if "x" in p:
            out["x"], out["y"] = p["x"], p["y"]
        if "path" in p:
            out["path"] = p["path"]
    texts = [p["text"] for p in parts if p["type"] == "TYPING" and p.get("text")]
    if texts:
        out["text"] = "".join(texts)
    keys = [k for p in parts if p["type"] in ("HOTKEY", "PRESS") for k in p.get("keys", [])]
    if keys:
        out["keys"] = keys
    return out
