"""OpenAI computer use: a model drives the desktop through the Responses API's computer tool.

``run.py --model computer-use-preview --agent openai-computer-use`` sends the tool
(``computer_use_preview`` with the display size the model sees and ``environment: linux``; or the
``computer`` tool with ``--tool_version computer``) and answers each ``computer_call`` with a
``computer_call_output`` holding the screenshot after its actions, chaining turns by
``previous_response_id`` (the API keeps the conversation; ``truncation: auto`` lets it drop the
oldest turns). Safety checks the API reports as pending are acknowledged in the next output and
logged in the trajectory (the turn's response text). Coordinates are the model's screenshot's
pixels, mapped back to the VM's screen. An answer without a computer call ends the episode by its
last line, ``DONE`` or ``FAIL``; a refusal ends it as FAIL.
"""
from __future__ import annotations

import base64
import logging
import time
from typing import Any


from desktop_env.actions import KEY_NAMES
from desktop_env.agents.base import Agent, TurnInfo
from desktop_env.agents.computer_use import NUDGE, SYSTEM, InvalidToolUse, final_line, screen_image
from desktop_env.agents.llm import api_key_for, call_with_backoff, png_at, sampling_kwargs, sdk_call
from desktop_env.agents.parsing import ScreenMapping
from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

TOOL_TYPES = ("computer_use_preview", "computer")
#: Key names the computer tool uses that pyautogui spells otherwise (compared in lower case).
OPENAI_KEYS = {"arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right", "return": "enter",
               "escape": "esc", "cmd": "win", "super": "win", "meta": "win", "option": "alt", "control": "ctrl",
               "page_up": "pageup", "page_down": "pagedown", "del": "delete", "spacebar": "space"}
#: Pixels of a scroll that make one wheel click.
SCROLL_PX_PER_CLICK = 100
WAIT_S = 2.0


def openai_key(name: Any) -> str:
    """A key name of the computer tool (``CTRL``, ``ArrowLeft``, ``S``) as pyautogui's; a letter names its key
    (``S`` in ``CTRL+S`` is the s key, not shift+s).

    Raises:
        InvalidToolUse: a key pyautogui does not know.
    """
    if not isinstance(name, str) or not name:
        raise InvalidToolUse(f"a key must be a non-empty name, got {name!r}")
    key = OPENAI_KEYS.get(name.lower(), name.lower())
    if key not in KEY_NAMES:
        raise InvalidToolUse(f"unknown key {name!r} (names such as CTRL, ENTER, ArrowLeft, a)")
    return key


def openai_action(action: dict, mapping: ScreenMapping) -> Any:
    """The env action for one computer-tool action (pyautogui code, or a WAIT dict).

    Raises:
        InvalidToolUse: an unknown action type, a button, key or coordinate that cannot be used.
    """
    kind = action.get("type")

    def at(x, y, field="x/y") -> tuple[int, int]:
        w, h = mapping.model
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)) \
                or not (0 <= x < w and 0 <= y < h):
            raise InvalidToolUse(f"{kind}: {field} ({x!r}, {y!r}) is not on the {w}x{h} screenshot")
        return mapping.to_screen(x, y)

    held = [openai_key(k) for k in action.get("keys") or []] if kind != "keypress" else []
    if kind == "screenshot":
        return {"action_type": "WAIT", "seconds": 0}
    if kind == "wait":
        return {"action_type": "WAIT", "seconds": WAIT_S}
    if kind == "type":
        if not isinstance(action.get("text"), str):
            raise InvalidToolUse(f"type needs `text`, got {action.get('text')!r}")
        return f"pyautogui.write({action['text']!r})"
    if kind == "keypress":
        keys = [openai_key(k) for k in action.get("keys") or []]
        if not keys:
            raise InvalidToolUse("keypress needs `keys`")
        return f"pyautogui.hotkey({', '.join(map(repr, keys))})"
    if kind in ("click", "double_click"):
        x, y = at(action.get("x"), action.get("y"))
        button = action.get("button", "left")
        if button in ("back", "forward"):  # the mouse's side buttons: the browser's history keys
            body = [f"pyautogui.hotkey('alt', {'left' if button == 'back' else 'right'!r})"]
        elif button in ("left", "right", "wheel"):
            body = [f"pyautogui.click({x}, {y}, clicks={2 if kind == 'double_click' else 1}, interval=0.1, "
                    f"button={'middle' if button == 'wheel' else button!r})"]
        else:
            raise InvalidToolUse(f"click: unknown button {button!r} (left, right, wheel, back, forward)")
    elif kind == "move":
        body = ["pyautogui.moveTo({}, {})".format(*at(action.get("x"), action.get("y")))]
    elif kind == "scroll":
        x, y = at(action.get("x"), action.get("y"))
        dx, dy = mapping.scale_delta(action.get("scroll_x") or 0, action.get("scroll_y") or 0)
        body = [f"pyautogui.moveTo({x}, {y})"]
        if dy:
            body.append(f"pyautogui.scroll({-_clicks(dy)})")
        if dx:
            body.append(f"pyautogui.hscroll({_clicks(dx)})")
    elif kind == "drag":
        path = action.get("path") or []
        if len(path) < 2 or not all(isinstance(p, dict) for p in path):
            raise InvalidToolUse("drag needs a `path` of at least two {x, y} points")
        points = [at(p.get("x"), p.get("y"), "path") for p in path]
        body = ["pyautogui.moveTo({}, {})".format(*points[0]), "pyautogui.mouseDown(button='left')",
                *("pyautogui.moveTo({}, {}, duration=0.2)".format(*p) for p in points[1:]),
                "pyautogui.mouseUp(button='left')"]
    else:
        raise InvalidToolUse(f"unknown action type {kind!r} (click, double_click, drag, keypress, move, scroll, "
                             "type, wait, screenshot)")
    return "\n".join([*(f"pyautogui.keyDown({k!r})" for k in held), *body,
                      *(f"pyautogui.keyUp({k!r})" for k in reversed(held))])


def _clicks(pixels: int) -> int:
    """Wheel clicks for a scroll of ``pixels`` (signed; at least one click when not zero)."""
    clicks = round(abs(pixels) / SCROLL_PX_PER_CLICK) or 1
    return clicks if pixels > 0 else -clicks


class OpenAIComputerAgent(Agent):
    """A model with the Responses API's computer tool (see the module docstring); ``--agent openai-computer-use``.

    Args:
        model: the model name (``computer-use-preview``, or a model that takes the ``computer`` tool).
        tool_version: ``computer_use_preview`` (default) or ``computer``.
        model_screen: the largest screenshot size the model is shown.
        max_tokens, temperature: sent when not None (``max_output_tokens``).
        base_url, api_key_env: where the model is served and which variable holds the key.
        client: a ready ``openai.OpenAI`` client (tests).
        api_attempts, api_backoff_s: the retry bound and base backoff.
    """

    def __init__(self, model: str = "computer-use-preview", action_space: str = "pyautogui",
                 tool_version: str = "computer_use_preview", model_screen: tuple[int, int] = (1280, 720),
                 max_tokens: int | None = None, temperature: float | None = None, base_url: str | None = None,
                 api_key_env: str | None = None, client: Any = None, api_attempts: int = 5,
                 api_backoff_s: float = 2.0, **_options: Any):
        super().__init__(action_space)
        if action_space != "pyautogui":
            raise DesktopEnvError("the computer-use agent runs its actions as pyautogui code: use "
                                  "--action_space pyautogui")
        if tool_version not in TOOL_TYPES:
            raise DesktopEnvError(f"unknown OpenAI computer tool {tool_version!r} (known: {', '.join(TOOL_TYPES)})")
        self.name, self.model, self.tool_version = model, model, tool_version
        self.model_screen = tuple(model_screen)
        self.max_tokens, self.temperature = max_tokens, temperature
        self.api_attempts, self.api_backoff_s = api_attempts, api_backoff_s
        if client is None:
            import openai

            client = openai.OpenAI(api_key=api_key_for(model, base_url, api_key_env, "OPENAI_API_KEY"),
                                   base_url=base_url, max_retries=0, timeout=300.0)
        self.client = client
        self.previous_id: str | None = None
        self.pending: list[dict] = []
        self.started = False

    def reset(self, task, env=None) -> None:
        self.previous_id, self.pending, self.started = None, [], False
        self.last_turn = TurnInfo()

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        image, mapping = screen_image(obs, self.model_screen)
        self.screen_mapping = mapping
        url = "data:image/png;base64," + base64.b64encode(png_at(image, mapping.model)).decode("ascii")
        if not self.started:
            items: list[dict] = [{"role": "user", "content": [{"type": "input_text", "text": instruction},
                                                              {"type": "input_image", "image_url": url}]}]
            self.started = True
        elif self.pending:
            items = []
            for call in self.pending:
                items.append({"type": "computer_call_output", "call_id": call["call_id"],
                              "output": {"type": "computer_screenshot", "image_url": url},
                              **({"acknowledged_safety_checks": call["checks"]} if call["checks"] else {})})
            problems = [c["error"] for c in self.pending if c.get("error")] + ([obs["error"]] if obs.get("error") else [])
            if problems:
                items.append({"role": "user", "content": "The last action did not run: " + "; ".join(problems)})
        else:
            items = [{"role": "user", "content": NUDGE}]
        t0 = time.monotonic()
        reply = call_with_backoff(lambda: self._create(items, mapping), attempts=self.api_attempts,
                                  base_s=self.api_backoff_s)
        self.previous_id = reply.id
        usage = getattr(reply, "usage", None)
        self.last_turn = TurnInfo(tokens_in=getattr(usage, "input_tokens", None),
                                  tokens_out=getattr(usage, "output_tokens", None),
                                  latency_s=round(time.monotonic() - t0, 3))
        texts, refusals, self.pending, actions = [], [], [], []
        for item in reply.output:
            item = item.model_dump(exclude_none=True) if hasattr(item, "model_dump") else dict(item)
            if item.get("type") == "message":
                for part in item.get("content") or []:
                    (refusals if part.get("type") == "refusal" else texts).append(part.get("refusal") or part.get("text") or "")
            elif item.get("type") == "computer_call":
                actions += self._call(item, mapping, texts)
        text = "\n".join(t for t in texts if t).strip()
        if refusals:
            log.warning("the model refused to go on: %s", refusals[0][:300])
            return "\n".join(refusals), ["FAIL"]
        if not self.pending:
            last = final_line(text)
            if last:
                return text, [last]
            self.last_turn.parse_error = "the model answered without a computer call and without a final DONE or FAIL line"
            return text, []
        errors = [c["error"] for c in self.pending if c.get("error")]
        if errors and not actions:
            self.last_turn.parse_error = errors[0]
        return text or f"(computer call: {', '.join(c['kinds'] for c in self.pending)})", actions

    def _call(self, item: dict, mapping: ScreenMapping, texts: list[str]) -> list:
        checks = [{k: c[k] for k in ("id", "code", "message") if k in c} for c in item.get("pending_safety_checks") or []]
        for check in checks:
            log.warning("safety check acknowledged: %s: %s", check.get("code"), check.get("message"))
            texts.append(f"[safety check acknowledged: {check.get('code')}: {check.get('message')}]")
        steps = item.get("actions") or ([item["action"]] if item.get("action") else [])
        call = {"call_id": item["call_id"], "checks": checks, "kinds": ", ".join(str(a.get("type")) for a in steps)}
        self.pending.append(call)
        try:
            return [openai_action(a, mapping) for a in steps]
        except InvalidToolUse as exc:
            call["error"] = str(exc)
            return []

    def _create(self, items: list[dict], mapping: ScreenMapping):
        import openai

        tool = ({"type": "computer_use_preview", "display_width": mapping.model[0], "display_height": mapping.model[1],
                 "environment": "linux"} if self.tool_version == "computer_use_preview" else {"type": "computer"})
        kwargs = {"model": self.model, "input": items, "tools": [tool], "truncation": "auto",
                  "instructions": SYSTEM.format(w=mapping.model[0], h=mapping.model[1])}
        if self.previous_id:
            kwargs["previous_response_id"] = self.previous_id
        kwargs = sampling_kwargs(self.client.responses.create, kwargs, max_output_tokens=self.max_tokens,
                                 temperature=self.temperature)
        return sdk_call(openai, self.client, self.model, self.client.responses.create, kwargs)
