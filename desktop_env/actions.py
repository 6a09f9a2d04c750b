"""Agent actions: validation of the computer_13 dicts and the pyautogui code space, and their translation."""
from __future__ import annotations

from dataclasses import dataclass

try:  # gymnasium is a hard requirement of the env, not of this module's users
    import gymnasium as gym
except ImportError:  # pragma: no cover
    gym = None

ACTION_SPACES = ("pyautogui", "computer_13")
SPECIAL = ("WAIT", "DONE", "FAIL")
MOUSE_BUTTONS = ("left", "right", "middle")

#: computer_13 action types -> (required params, optional params)
COMPUTER_13: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "MOVE_TO": (("x", "y"), ()),
    "CLICK": ((), ("button", "x", "y", "num_clicks")),
    "MOUSE_DOWN": ((), ("button",)),
    "MOUSE_UP": ((), ("button",)),
    "RIGHT_CLICK": ((), ("x", "y")),
    "DOUBLE_CLICK": ((), ("x", "y")),
    "DRAG_TO": (("x", "y"), ()),
    "SCROLL": ((), ("dx", "dy", "clicks")),
    "TYPING": (("text",), ()),
    "PRESS": (("key",), ()),
    "KEY_DOWN": (("key",), ()),
    "KEY_UP": (("key",), ()),
    "HOTKEY": (("keys",), ()),
    "WAIT": ((), ("seconds",)),
    "DONE": ((), ()),
    "FAIL": ((), ()),
}

#: Key names pyautogui accepts (its KEYBOARD_KEYS), kept here so validation needs no X display.
KEY_NAMES = frozenset(
    [chr(c) for c in range(32, 127)]
    + ["\t", "\n", "\r", "accept", "add", "alt", "altleft", "altright", "apps", "backspace", "browserback",
       "browserfavorites", "browserforward", "browserhome", "browserrefresh", "browsersearch", "browserstop",
       "capslock", "clear", "convert", "ctrl", "ctrlleft", "ctrlright", "decimal", "del", "delete", "divide",
       "down", "end", "enter", "esc", "escape", "execute", "final", "fn", "help", "home", "insert", "left",
       "launchapp1", "launchapp2", "launchmail", "launchmediaselect", "modechange", "multiply", "nexttrack",
       "nonconvert", "num0", "num1", "num2", "num3", "num4", "num5", "num6", "num7", "num8", "num9",
       "numlock", "pagedown", "pageup", "pause", "pgdn", "pgup", "playpause", "prevtrack", "print",
       "printscreen", "prntscrn", "prtsc", "prtscr", "return", "right", "scrolllock", "select", "separator",
       "shift", "shiftleft", "shiftright", "sleep", "space", "stop", "subtract", "tab", "up", "volumedown",
       "volumemute", "volumeup", "win", "winleft", "winright", "yen", "command", "option", "optionleft",
       "optionright"]
    + [f"f{i}" for i in range(1, 25)])

MAX_TYPING_CHARS = 20000


class InvalidAction(ValueError):
    """An action that does not fit its action space; the message says what is wrong."""


@dataclass
class ParsedAction:
    """A validated action.

    Attributes:
        kind: ``code`` (pyautogui code), ``typing`` (text, typed by ``typing_code``), or one of
            WAIT, DONE, FAIL.
        code: pyautogui code to run for ``code``.
        text: the text for ``typing``.
        seconds: wait duration for WAIT.
    """

    kind: str
    code: str = ""
    text: str = ""
    seconds: float = 0.0


def _special(action) -> str | None:
    if isinstance(action, str):
        name = action.strip().upper()
    elif isinstance(action, dict):
        name = str(action.get("action_type", "")).upper()
    else:
        return None
    return name if name in SPECIAL else None


def parse_action(action, action_space: str, screen: tuple[int, int]) -> ParsedAction:
    """Validate ``action`` for ``action_space`` and turn it into something runnable.

    Raises:
        InvalidAction: with a message naming the field and the accepted values.
    """
    if action_space not in ACTION_SPACES:
        raise InvalidAction(f"unknown action space {action_space!r} (use one of {', '.join(ACTION_SPACES)})")
    special = _special(action)
    if special in ("DONE", "FAIL"):
        return ParsedAction(special)
    if special == "WAIT":
        seconds = float(action.get("seconds", 1.0)) if isinstance(action, dict) else 1.0
        if not 0 <= seconds <= 60:
            raise InvalidAction(f"WAIT seconds={seconds} must be within 0..60")
        return ParsedAction("WAIT", seconds=seconds)
    if action_space == "pyautogui":
        if not isinstance(action, str):
            raise InvalidAction(f"the pyautogui action space takes Python code as a string, got {type(action).__name__}")
        try:
            compile(action, "<action>", "exec")
        except SyntaxError as exc:
            raise InvalidAction(f"the action is not valid Python: {exc.msg} (line {exc.lineno})") from exc
        return ParsedAction("code", code=action)
    return _parse_computer_13(action, screen)


def _coord(action: dict, key: str, limit: int) -> int:
    value = action[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidAction(f"{action['action_type']}.{key} must be a number, got {value!r}")
    if not 0 <= value < limit:
        raise InvalidAction(f"{action['action_type']}.{key}={value} is off screen (0..{limit - 1})")
    return int(value)


def _key(action_type: str, key) -> str:
    if not isinstance(key, str) or key.lower() not in KEY_NAMES and key not in KEY_NAMES:
        raise InvalidAction(f"{action_type}: unknown key {key!r} (pyautogui key names, e.g. 'enter', 'ctrl', 'a')")
    return key.lower() if len(key) > 1 else key


def _parse_computer_13(action, screen: tuple[int, int]) -> ParsedAction:
    if not isinstance(action, dict):
        raise InvalidAction(f"computer_13 actions are dicts with an 'action_type', got {type(action).__name__}")
    kind = action.get("action_type")
    if kind not in COMPUTER_13:
        import difflib

        close = difflib.get_close_matches(str(kind), list(COMPUTER_13), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InvalidAction(f"unknown action_type {kind!r}{hint}")
    required, optional = COMPUTER_13[kind]
    params = dict(action.get("parameters") or {}, **{k: v for k, v in action.items()
                                                      if k not in ("action_type", "parameters")})
    action = {"action_type": kind, **params}
    missing = [k for k in required if k not in action]
    if missing:
        raise InvalidAction(f"{kind} needs {', '.join(missing)}")
    extra = set(action) - {"action_type", *required, *optional}
    if extra:
        raise InvalidAction(f"{kind} does not take {', '.join(sorted(extra))} (takes {', '.join(required + optional) or 'nothing'})")
    width, height = screen
    button = action.get("button", "left")
    if button not in MOUSE_BUTTONS:
        raise InvalidAction(f"{kind}.button must be one of {MOUSE_BUTTONS}, got {button!r}")
    xy = ""
    if "x" in action or "y" in action:
        if not ("x" in action and "y" in action):
            raise InvalidAction(f"{kind} needs both x and y, or neither")
        xy = f"{_coord(action, 'x', width)}, {_coord(action, 'y', height)}"
    if kind == "MOVE_TO":
        code = f"pyautogui.moveTo({xy})"
    elif kind == "CLICK":
        clicks = action.get("num_clicks", 1)
        if not isinstance(clicks, int) or not 1 <= clicks <= 3:
            raise InvalidAction(f"CLICK.num_clicks must be 1, 2 or 3, got {clicks!r}")
        code = f"pyautogui.click({xy + ', ' if xy else ''}button={button!r}, clicks={clicks})"
    elif kind == "MOUSE_DOWN":
        code = f"pyautogui.mouseDown(button={button!r})"
    elif kind == "MOUSE_UP":
        code = f"pyautogui.mouseUp(button={button!r})"
    elif kind == "RIGHT_CLICK":
        code = f"pyautogui.rightClick({xy})"
    elif kind == "DOUBLE_CLICK":
        code = f"pyautogui.doubleClick({xy})"
    elif kind == "DRAG_TO":
        code = f"pyautogui.dragTo({xy}, duration=0.3, button='left')"
    elif kind == "SCROLL":
        dx, dy = action.get("dx", 0), action.get("clicks", action.get("dy", 0))
        for name, value in (("dx", dx), ("dy", dy)):
            if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 100:
                raise InvalidAction(f"SCROLL.{name} must be an integer within -100..100, got {value!r}")
        if not dx and not dy:
            raise InvalidAction("SCROLL needs a non-zero dx or dy (or clicks)")
        code = "; ".join(c for c in (f"pyautogui.scroll({dy})" if dy else "",
                                     f"pyautogui.hscroll({dx})" if dx else "") if c)
    elif kind == "TYPING":
        text = action["text"]
        if not isinstance(text, str):
            raise InvalidAction(f"TYPING.text must be a string, got {type(text).__name__}")
        if len(text) > MAX_TYPING_CHARS:
            raise InvalidAction(f"TYPING.text is {len(text)} characters; at most {MAX_TYPING_CHARS} per action")
        return ParsedAction("typing", text=text)
    elif kind in ("PRESS", "KEY_DOWN", "KEY_UP"):
        key = _key(kind, action["key"])
        fn = {"PRESS": "press", "KEY_DOWN": "keyDown", "KEY_UP": "keyUp"}[kind]
        code = f"pyautogui.{fn}({key!r})"
    elif kind == "HOTKEY":
        keys = action["keys"]
        if not isinstance(keys, list) or not keys:
            raise InvalidAction("HOTKEY.keys must be a non-empty list of key names")
        code = f"pyautogui.hotkey({', '.join(repr(_key(kind, k)) for k in keys)})"
    else:  # pragma: no cover - every kind is handled above
        raise InvalidAction(f"unhandled action {kind}")
    return ParsedAction("code", code=code)


def typing_code(text: str) -> str:
    """pyautogui code that types ``text`` (any Unicode) into the focused window.

    One typing path for both action spaces: computer_13 TYPING runs the same ``pyautogui.write``
    an agent of the pyautogui space calls, which the guest's executor makes type every character
    exactly and in order (``vm_server/xkeys.py``).
    """
    return f"pyautogui.write({text!r})"


# -- gymnasium spaces -------------------------------------------------------------------
if gym is not None:
    class UnicodeText(gym.spaces.Space):
        """Any Python string up to ``max_length`` characters (Gymnasium's Text only takes a fixed charset)."""

        def __init__(self, max_length: int = 1_000_000, seed=None):
            self.max_length = max_length
            super().__init__(shape=None, dtype=None, seed=seed)

        def contains(self, x) -> bool:
            return isinstance(x, str) and len(x) <= self.max_length

        def sample(self, mask=None, probability=None) -> str:
            n = int(self.np_random.integers(0, 16))
            return "".join(chr(int(c)) for c in self.np_random.integers(32, 0x2FFF, size=n))

        @property
        def is_np_flattenable(self) -> bool:
            return False

        def __repr__(self) -> str:
            return f"UnicodeText(max_length={self.max_length})"

        def __eq__(self, other) -> bool:
            return isinstance(other, UnicodeText) and other.max_length == self.max_length

    class PyAutoGUISpace(UnicodeText):
        """Python code strings run in the VM (plus the strings WAIT, DONE, FAIL)."""

        def contains(self, x) -> bool:
            return isinstance(x, str) and len(x) <= self.max_length

        def sample(self, mask=None, probability=None) -> str:
            width, height = getattr(self, "screen", (1920, 1080))
            x, y = int(self.np_random.integers(0, width)), int(self.np_random.integers(0, height))
            return f"pyautogui.moveTo({x}, {y})"

        def __repr__(self) -> str:
            return "PyAutoGUISpace()"

    class Computer13Space(gym.spaces.Space):
        """computer_13 action dicts (validated by :func:`parse_action`)."""

        def __init__(self, screen: tuple[int, int], seed=None):
            self.screen = tuple(screen)
            super().__init__(shape=None, dtype=None, seed=seed)

        def contains(self, x) -> bool:
            try:
                parse_action(x, "computer_13", self.screen)
                return True
            except (InvalidAction, TypeError, ValueError):
                return False

        def sample(self, mask=None, probability=None) -> dict:
            """A random valid action (mouse moves and clicks, scrolls, a few keys, short typing)."""
            rng = self.np_random
            width, height = self.screen
            kind = str(rng.choice(["MOVE_TO", "CLICK", "RIGHT_CLICK", "DOUBLE_CLICK", "SCROLL", "TYPING",
                                   "PRESS", "HOTKEY", "WAIT"]))
            x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
            if kind in ("MOVE_TO", "CLICK", "RIGHT_CLICK", "DOUBLE_CLICK"):
                return {"action_type": kind, "x": x, "y": y}
            if kind == "SCROLL":
                return {"action_type": "SCROLL", "dy": int(rng.choice([-3, -1, 1, 3]))}
            if kind == "TYPING":
                return {"action_type": "TYPING", "text": "".join(rng.choice(list("abcdefgh 123")) for _ in range(5))}
            if kind == "PRESS":
                return {"action_type": "PRESS", "key": str(rng.choice(["enter", "tab", "esc", "down", "up"]))}
            if kind == "HOTKEY":
                return {"action_type": "HOTKEY", "keys": ["ctrl", str(rng.choice(["a", "c", "z"]))]}
            return {"action_type": "WAIT", "seconds": 0.5}

        @property
        def is_np_flattenable(self) -> bool:
            return False

        def __repr__(self) -> str:
            return f"Computer13Space(screen={self.screen})"

        def __eq__(self, other) -> bool:
            return isinstance(other, Computer13Space) and other.screen == self.screen


__all__ = ["parse_action", "ParsedAction", "InvalidAction", "typing_code", "ACTION_SPACES", "COMPUTER_13",
           "KEY_NAMES"]
