"""Anthropic computer use: Claude drives the desktop through its own ``computer`` tool.

``run.py --model claude-... --agent computer-use`` sends the tool (``computer_20251124`` by default,
``--tool_version computer_20250124`` for models of that generation) with the screen size the model
sees (``--model_screen``, default 1280x720: within the vendor's image limits; the real screen's
aspect ratio is kept and coordinates are mapped back). Each ``tool_use`` becomes one action run in
the VM (pyautogui code, or a WAIT), and the next turn answers it with a ``tool_result`` holding the
screenshot after it (or the error text, flagged ``is_error``, for an action that is not valid).
Screenshots older than the last ``max_trajectory_length`` are replaced by a line of text; every
``tool_use`` keeps its ``tool_result``. The episode ends when the model answers without a tool call:
its last line ``DONE`` or ``FAIL`` is the env's DONE or FAIL (nothing else in the text is).
"""
from __future__ import annotations

import base64
import logging
import time
from typing import Any

from PIL import Image

from desktop_env.actions import KEY_NAMES
from desktop_env.agents.base import Agent, TurnInfo
from desktop_env.agents.llm import api_key_for, call_with_backoff, png_at, sampling_kwargs, sdk_call
from desktop_env.agents.parsing import ScreenMapping, fit_screen
from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

#: Tool versions and the beta flag each needs.
TOOL_VERSIONS = {"computer_20250124": "computer-use-2025-01-24", "computer_20251124": "computer-use-2025-11-24"}
DEFAULT_TOOL = "computer_20251124"
#: Actions of the 2025-01-24 tool; the 2025-11-24 one adds ``zoom``.
ACTIONS = ("screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
           "left_click_drag", "left_mouse_down", "left_mouse_up", "mouse_move", "scroll", "key", "hold_key",
           "type", "wait", "cursor_position")
#: Actions that only look: nothing runs in the VM (a zero-second WAIT brings the new observation).
LOOKS = ("screenshot", "cursor_position", "zoom")
OMITTED = "(an older screenshot, omitted to keep the conversation short)"
SYSTEM = ("You operate a Linux desktop (XFCE, {w}x{h} pixels as you see it) through the computer tool, as a "
          "person would with mouse and keyboard. The user's task follows. Work step by step and look at the "
          "screen after each action. When you are finished, answer without a tool call and end your answer with "
          "a line holding only DONE if the task is complete, or only FAIL if it cannot be done.")
NUDGE = "Continue with the task, or end your answer with a line holding only DONE or FAIL."

#: xdotool key names (as the tool's ``key`` and ``hold_key`` take them) that pyautogui spells otherwise.
XDOTOOL_KEYS = {"return": "enter", "kp_enter": "enter", "escape": "esc", "prior": "pageup", "page_up": "pageup",
                "next": "pagedown", "page_down": "pagedown", "super": "win", "super_l": "winleft",
                "super_r": "winright", "meta": "win", "cmd": "win", "control": "ctrl", "control_l": "ctrlleft",
                "control_r": "ctrlright", "alt_l": "altleft", "alt_r": "altright", "shift_l": "shiftleft",
                "shift_r": "shiftright", "caps_lock": "capslock", "print": "printscreen", "menu": "apps",
                "minus": "-", "plus": "+", "equal": "=", "period": ".", "comma": ",", "slash": "/",
                "backslash": "\\", "semicolon": ";", "apostrophe": "'", "grave": "`", "bracketleft": "[",
                "bracketright": "]", "kp_add": "add", "kp_subtract": "subtract"}


def final_line(text: str) -> str | None:
    """``DONE`` or ``FAIL`` when that is the last non-empty line of a final answer, else None."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1].upper() if lines and lines[-1].upper() in ("DONE", "FAIL") else None


class InvalidToolUse(ValueError):
    """A ``tool_use`` the desktop cannot run (unknown action, missing or off-screen coordinate, ...)."""


def xdotool_keys(text: Any) -> list[list[str]]:
    """``"ctrl+shift+t"`` -> ``[["ctrl", "shift", "t"]]``; several chords separated by spaces give several.

    Raises:
        InvalidToolUse: an empty text or a key pyautogui does not know.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidToolUse(f"key needs `text` with xdotool key names such as 'ctrl+s' or 'Return', got {text!r}")
    chords = []
    for chord in text.split():
        keys = []
        for name in chord.split("+") if chord != "+" else ["+"]:
            key = XDOTOOL_KEYS.get(name.lower(), name if len(name) == 1 else name.lower())
            if key not in KEY_NAMES:
                raise InvalidToolUse(f"unknown key {name!r} in {text!r} (xdotool names: Return, Escape, ctrl, "
                                     "alt, shift, super, Page_Up, F5, a, ...)")
            keys.append(key)
        chords.append(keys)
    return chords


class ToolTranslator:
    """Turns the ``computer`` tool's inputs into actions for the env, on a screen mapped from the model's."""

    def __init__(self, mapping: ScreenMapping, version: str = DEFAULT_TOOL):
        self.mapping = mapping
        self.version = version

    def point(self, value: Any, field: str = "coordinate") -> tuple[int, int]:
        """A model-space ``[x, y]`` on the real screen.

        Raises:
            InvalidToolUse: not two numbers, or off the model's screen.
        """
        w, h = self.mapping.model
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise InvalidToolUse(f"`{field}` must be [x, y] in pixels of the {w}x{h} screen, got {value!r}")
        if not (0 <= value[0] < w and 0 <= value[1] < h):
            raise InvalidToolUse(f"`{field}` {list(value)} is off the {w}x{h} screen")
        return self.mapping.to_screen(value[0], value[1])

    def action(self, tool_input: dict) -> Any:
        """The env action for one ``tool_use`` input (pyautogui code, or a WAIT dict for looks and waits).

        Raises:
            InvalidToolUse: the action is unknown to this tool version or its fields are wrong.
        """
        kind = tool_input.get("action")
        known = ACTIONS + (("zoom",) if self.version == "computer_20251124" else ())
        if kind not in known:
            raise InvalidToolUse(f"unknown action {kind!r} for {self.version} (known: {', '.join(known)})")
        if kind in LOOKS:
            if kind == "zoom":
                self.region(tool_input.get("region"))
            return {"action_type": "WAIT", "seconds": 0}
        if kind == "wait":
            seconds = tool_input.get("duration", 1)
            if not isinstance(seconds, (int, float)) or not 0 <= seconds <= 60:
                raise InvalidToolUse(f"wait `duration` must be 0..60 seconds, got {seconds!r}")
            return {"action_type": "WAIT", "seconds": float(seconds)}
        if kind == "type":
            text = tool_input.get("text")
            if not isinstance(text, str) or not text:
                raise InvalidToolUse(f"type needs a non-empty `text`, got {text!r}")
            return f"pyautogui.write({text!r})"
        if kind == "key":
            return "\n".join(f"pyautogui.hotkey({', '.join(map(repr, chord))})"
                             for chord in xdotool_keys(tool_input.get("text")))
        if kind == "hold_key":
            seconds = tool_input.get("duration")
            if not isinstance(seconds, (int, float)) or not 0 < seconds <= 60:
                raise InvalidToolUse(f"hold_key `duration` must be above 0 and at most 60 seconds, got {seconds!r}")
            keys = [k for chord in xdotool_keys(tool_input.get("text")) for k in chord]
            return "\n".join(["import time", *(f"pyautogui.keyDown({k!r})" for k in keys), f"time.sleep({seconds!r})",
                              *(f"pyautogui.keyUp({k!r})" for k in reversed(keys))])
        return self._mouse(kind, tool_input)

    def _mouse(self, kind: str, tool_input: dict) -> str:
        held = [k for chord in xdotool_keys(tool_input["text"]) for k in chord] if tool_input.get("text") else []
        where = tool_input.get("coordinate")
        if kind == "left_click_drag":
            sx, sy = self.point(tool_input.get("start_coordinate"), "start_coordinate")
            x, y = self.point(where)
            body = [f"pyautogui.moveTo({sx}, {sy})", f"pyautogui.dragTo({x}, {y}, duration=0.5, button='left')"]
        elif kind == "mouse_move":
            x, y = self.point(where)
            body = [f"pyautogui.moveTo({x}, {y})"]
        elif kind in ("left_mouse_down", "left_mouse_up"):
            at = "" if where is None else "{}, {}, ".format(*self.point(where))
            body = [f"pyautogui.{'mouseDown' if kind.endswith('down') else 'mouseUp'}({at}button='left')"]
        elif kind == "scroll":
            body = self._scroll(tool_input)
        else:
            at = "" if where is None else "{}, {}, ".format(*self.point(where))
            button, clicks = {"left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
                              "double_click": ("left", 2), "triple_click": ("left", 3)}[kind]
            body = [f"pyautogui.click({at}clicks={clicks}, interval=0.1, button={button!r})"]
        return "\n".join([*(f"pyautogui.keyDown({k!r})" for k in held), *body,
                          *(f"pyautogui.keyUp({k!r})" for k in reversed(held))])

    def _scroll(self, tool_input: dict) -> list[str]:
        direction, amount = tool_input.get("scroll_direction"), tool_input.get("scroll_amount", 3)
        if direction not in ("up", "down", "left", "right"):
            raise InvalidToolUse(f"scroll_direction must be up, down, left or right, got {direction!r}")
        if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= 100:
            raise InvalidToolUse(f"scroll_amount must be a whole number of clicks 1..100, got {amount!r}")
        body = [] if tool_input.get("coordinate") is None else \
            ["pyautogui.moveTo({}, {})".format(*self.point(tool_input["coordinate"]))]
        clicks = amount if direction in ("up", "left") else -amount
        body.append(f"pyautogui.{'scroll' if direction in ('up', 'down') else 'hscroll'}({clicks})")
        return body

    def region(self, value: Any) -> tuple[int, int, int, int]:
        """A zoom ``region`` ``[x0, y0, x1, y1]`` (model space) as a box on the real screen.

        Raises:
            InvalidToolUse: not four numbers of a non-empty box on the model's screen.
        """
        if not isinstance(value, (list, tuple)) or len(value) != 4:
            raise InvalidToolUse(f"zoom needs `region` [x0, y0, x1, y1], got {value!r}")
        x0, y0 = self.point(value[:2], "region")
        x1, y1 = self.point(value[2:], "region")
        if x1 <= x0 or y1 <= y0:
            raise InvalidToolUse(f"zoom `region` {list(value)} is empty: x1 > x0 and y1 > y0 are needed")
        return x0, y0, x1, y1


class ComputerUseAgent(Agent):
    """Claude with Anthropic's ``computer`` tool (see the module docstring); ``--agent computer-use``.

    Args:
        model: the Claude model name.
        tool_version: ``computer_20251124`` (default, with ``zoom``) or ``computer_20250124``.
        model_screen: the largest screen size the model is shown.
        max_trajectory_length: screenshots kept in the conversation (older ones become a line of text).
        temperature, max_tokens: sampling (temperature None: not sent).
        base_url, api_key_env: where the model is served and which variable holds the key.
        client: a ready ``anthropic.Anthropic`` client (tests).
        api_attempts, api_backoff_s: the retry bound and base backoff.
    """

    def __init__(self, model: str = "claude-sonnet-4-5", action_space: str = "pyautogui",
                 tool_version: str = DEFAULT_TOOL, model_screen: tuple[int, int] = (1280, 720),
                 max_trajectory_length: int = 3, temperature: float | None = None, max_tokens: int = 4096,
                 base_url: str | None = None, api_key_env: str | None = None, client: Any = None,
                 api_attempts: int = 5, api_backoff_s: float = 2.0, **_options: Any):
        super().__init__(action_space)
        if action_space != "pyautogui":
            raise DesktopEnvError("the computer-use agent runs its actions as pyautogui code: use "
                                  "--action_space pyautogui")
        if tool_version not in TOOL_VERSIONS:
            raise DesktopEnvError(f"unknown computer tool version {tool_version!r} (known: {', '.join(TOOL_VERSIONS)})")
        self.name, self.model, self.tool_version = model, model, tool_version
        self.model_screen = tuple(model_screen)
        self.max_images = max(1, int(max_trajectory_length))
        self.temperature, self.max_tokens = temperature, max_tokens
        self.api_attempts, self.api_backoff_s = api_attempts, api_backoff_s
        if client is None:
            import anthropic

            client = anthropic.Anthropic(api_key=api_key_for(model, base_url, api_key_env, "ANTHROPIC_API_KEY"),
                                         base_url=base_url, max_retries=0, timeout=300.0)
        self.client = client
        self.env = None
        self.messages: list[dict] = []
        self.pending: list[dict] = []

    def reset(self, task, env=None) -> None:
        self.env, self.messages, self.pending = env, [], []
        self.last_turn = TurnInfo()

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        image, mapping = screen_image(obs, self.model_screen)
        self.screen_mapping = mapping
        translator = ToolTranslator(mapping, self.tool_version)
        if not self.messages:
            content = [{"type": "text", "text": instruction}, _image_block(image, mapping.model)]
        elif self.pending:
            content = self._results(image, translator, obs.get("error") or "")
        else:
            content = [{"type": "text", "text": NUDGE}]
        self.messages.append({"role": "user", "content": content})
        self._trim_images()
        reply = call_with_backoff(lambda: self._create(mapping), attempts=self.api_attempts, base_s=self.api_backoff_s)
        self.messages.append({"role": "assistant", "content": reply["content"]})
        text = "\n".join(b.get("text", "") for b in reply["content"] if b.get("type") == "text").strip()
        uses = [b for b in reply["content"] if b.get("type") == "tool_use"]
        self.last_turn = TurnInfo(tokens_in=reply["tokens_in"], tokens_out=reply["tokens_out"],
                                  latency_s=round(reply["latency_s"], 3))
        self.pending = []
        if reply["stop_reason"] == "refusal":
            log.warning("the model refused to go on: %s", text[:300])
            return text or "(refused)", ["FAIL"]
        if not uses:
            last = final_line(text)
            if last:
                return text, [last]
            self.last_turn.parse_error = "the model answered without a tool call and without a final DONE or FAIL line"
            return text, []
        actions, broken = [], None
        for use in uses:
            entry = {"id": use["id"], "input": use.get("input") or {}}
            if use.get("name") != "computer":
                broken = entry["error"] = f"unknown tool {use.get('name')!r}: only `computer` is offered"
            elif broken:
                entry["error"] = "not run: an earlier action of this turn was not valid"
            else:
                try:
                    actions.append(translator.action(entry["input"]))
                except InvalidToolUse as exc:
                    broken = entry["error"] = str(exc)
            self.pending.append(entry)
        if broken and not actions:
            self.last_turn.parse_error = broken
        return text or f"(tool use: {', '.join(str(u.get('input', {}).get('action')) for u in uses)})", actions

    # -- the conversation --------------------------------------------------------------------
    def _results(self, image: Image.Image, translator: ToolTranslator, error: str) -> list[dict]:
        """One ``tool_result`` per ``tool_use`` of the last reply; the last one that ran carries the screen."""
        ran = [p for p in self.pending if "error" not in p]
        out = []
        for entry in self.pending:
            block: dict = {"type": "tool_result", "tool_use_id": entry["id"]}
            if "error" in entry:
                block.update(content=[{"type": "text", "text": entry["error"]}], is_error=True)
            elif entry is not ran[-1]:
                block["content"] = [{"type": "text", "text": "done"}]
            else:
                block["content"] = self._looked(entry["input"], image, translator)
                if error:
                    block["content"].insert(0, {"type": "text", "text": f"the action failed: {error}"})
                    block["is_error"] = True
            out.append(block)
        return out

    def _looked(self, tool_input: dict, image: Image.Image, translator: ToolTranslator) -> list[dict]:
        kind = tool_input.get("action")
        if kind == "cursor_position":
            x, y = self.env.controller.cursor_position() if self.env is not None else (0, 0)
            mx, my = translator.mapping.to_model(x, y)
            return [{"type": "text", "text": f"X={mx},Y={my}"}]
        if kind == "zoom":
            box = translator.region(tool_input.get("region"))
            crop = image.crop(box)
            return [_image_block(crop, fit_screen(crop.size, translator.mapping.model))]
        return [_image_block(image, translator.mapping.model)]

    def _trim_images(self) -> None:
        """Replace all but the newest ``max_images`` screenshots with a line of text (pairs are kept)."""
        slots = []  # (the list holding an image, its index), oldest first
        for message in self.messages:
            if message["role"] != "user":
                continue
            for i, block in enumerate(message["content"]):
                if block.get("type") == "image":
                    slots.append((message["content"], i))
                elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    slots += [(block["content"], j) for j, part in enumerate(block["content"])
                              if part.get("type") == "image"]
        for holder, i in slots[:-self.max_images]:
            holder[i] = {"type": "text", "text": OMITTED}

    def _create(self, mapping: ScreenMapping) -> dict:
        tool = {"type": self.tool_version, "name": "computer", "display_width_px": mapping.model[0],
                "display_height_px": mapping.model[1]}
        if self.tool_version == "computer_20251124":
            tool["enable_zoom"] = True
        kwargs = {"model": self.model, "max_tokens": self.max_tokens, "messages": self.messages, "tools": [tool],
                  "betas": [TOOL_VERSIONS[self.tool_version]],
                  "system": SYSTEM.format(w=mapping.model[0], h=mapping.model[1])}
        kwargs = sampling_kwargs(self.client.beta.messages.create, kwargs, temperature=self.temperature)
        import anthropic

        t0 = time.monotonic()
        reply = sdk_call(anthropic, self.client, self.model, self.client.beta.messages.create, kwargs)
        usage = getattr(reply, "usage", None)
        content = [b.model_dump(exclude_none=True) for b in reply.content]
        return {"content": content, "stop_reason": reply.stop_reason, "latency_s": time.monotonic() - t0,
                "tokens_in": getattr(usage, "input_tokens", None), "tokens_out": getattr(usage, "output_tokens", None)}


def screen_image(obs: dict, model_screen: tuple[int, int]) -> tuple[Image.Image, ScreenMapping]:
    """The observation's screenshot and its mapping to the model's screen (fitted into ``model_screen``).

    Raises:
        DesktopEnvError: the observation has no screenshot.
    """
    shot = obs.get("screenshot")
    if shot is None or not getattr(shot, "size", 0):
        raise DesktopEnvError("the computer-use agent needs the screenshot in the observation")
    image = Image.fromarray(shot)
    return image, ScreenMapping(fit_screen(image.size, model_screen), image.size)


def _image_block(image: Image.Image, size: tuple[int, int]) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(png_at(image, size)).decode("ascii")}}
