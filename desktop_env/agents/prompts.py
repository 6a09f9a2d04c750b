"""System prompts for model agents, per action space and observation type (versioned: PROMPT_VERSION goes in manifests)."""
from __future__ import annotations

#: Bump when any prompt text changes: results of different versions are not comparable.
PROMPT_VERSION = "1"

_ROLE = """You are an agent that completes tasks on a Linux desktop (Debian, Xfce) by acting on the computer.
The user's password is 'password'. Each turn you get the task and the current {observation}, and you answer with the next action(s).
The screen you see is {width}x{height} pixels; give every coordinate in that space, with (0, 0) at the top-left corner."""

_OBSERVATIONS = {
    "screenshot": "screenshot",
    "a11y_tree": "accessibility tree (a table of the visible elements with their positions and sizes)",
    "screenshot_a11y_tree": "screenshot and accessibility tree (a table of the visible elements with their "
                            "positions and sizes)",
    "som": "screenshot with numbered red boxes on the interactive elements (set-of-marks) and a table of those "
           "elements by number",
}

_PYAUTOGUI = """Answer with Python code using pyautogui in one ```python code block per action, e.g.
```python
pyautogui.click(412, 300)
pyautogui.write('SELECT a FROM t WHERE b = \\'x; y\\';')
pyautogui.press('enter')
```
Each block runs as one unit; several blocks run in order. Do not use pyautogui.locateCenterOnScreen or
pyautogui.screenshot; you cannot see the result of an action before your next turn, so add time.sleep(...) where
an action needs time. Use pyautogui.hotkey('ctrl', 'c') for key combinations."""

_COMPUTER_13 = """Answer with one action as a JSON object in a ```json code block (or a JSON list of them to run in order).
Action types and their fields:
MOVE_TO {x, y}; CLICK {x?, y?, button?: left|right|middle, num_clicks?}; MOUSE_DOWN {button?}; MOUSE_UP {button?};
RIGHT_CLICK {x?, y?}; DOUBLE_CLICK {x?, y?}; DRAG_TO {x, y}; SCROLL {dx?, dy?}; TYPING {text}; PRESS {key};
KEY_DOWN {key}; KEY_UP {key}; HOTKEY {keys: [..]}; WAIT {seconds?}; DONE; FAIL. Example:
```json
{"action_type": "CLICK", "x": 412, "y": 300}
```"""

_SOM_PYAUTOGUI = """You may use tag_N for the centre of the element numbered N, e.g. pyautogui.click(tag_3)."""
_SOM_COMPUTER_13 = """You may give "tag": N instead of x and y to act on the centre of the element numbered N,
e.g. {"action_type": "CLICK", "tag": 3}."""

_SPECIALS = """When you must wait for something, answer WAIT. When the task is complete, answer DONE.
When the task cannot be done, answer FAIL. Answer WAIT, DONE or FAIL alone on a line, outside code blocks.
Think briefly about what you see first, then give the action."""


def system_prompt(action_space: str, observation_type: str, model_screen: tuple[int, int]) -> str:
    """The system prompt for ``action_space`` (pyautogui | computer_13) and ``observation_type``.

    Raises:
        ValueError: an unknown action space or observation type.
    """
    if observation_type not in _OBSERVATIONS:
        raise ValueError(f"unknown observation type {observation_type!r} (use one of {', '.join(_OBSERVATIONS)})")
    if action_space not in ("pyautogui", "computer_13"):
        raise ValueError(f"unknown action space {action_space!r} (use pyautogui or computer_13)")
    parts = [_ROLE.format(observation=_OBSERVATIONS[observation_type], width=model_screen[0],
                          height=model_screen[1]),
             _PYAUTOGUI if action_space == "pyautogui" else _COMPUTER_13]
    if observation_type == "som":
        parts.append(_SOM_PYAUTOGUI if action_space == "pyautogui" else _SOM_COMPUTER_13)
    parts.append(_SPECIALS)
    return "\n\n".join(parts)


def turn_text(instruction: str, a11y: str | None, marks_table: str | None, error: str = "") -> str:
    """The user message text of one turn (the image, if any, is sent beside it)."""
    parts = [f"Task: {instruction}"]
    if error:
        parts.append(f"The previous action failed: {error}")
    if a11y is not None:
        parts.append("Accessibility tree:\n" + (a11y or "(empty)"))
    if marks_table is not None:
        parts.append("Marked elements:\n" + (marks_table or "(none)"))
    parts.append("What is the next action?")
    return "\n\n".join(parts)
