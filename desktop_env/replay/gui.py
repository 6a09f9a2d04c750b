"""Replaying the GUI steps of a reference solution: locate the target (polling until the step's
deadline), then act on it with ordinary input events: the step's last event through ``env.step`` (one GUI
step is one step of the episode), those before it through ``env.perform``; ``wait`` polls its condition.
Never a fixed sleep.

Each act is issued as computer_13 actions (``CLICK`` at x, y, ``DRAG_TO``, ``TYPING``, ``HOTKEY``,
``SCROLL``), as pyautogui code when the environment's action space is pyautogui, so the oracle
replays in either space. A step whose target cannot be found stops with an ``error`` naming the
step, what it looked for and what it saw; the episode keeps that step's screenshot.
"""
from __future__ import annotations

import logging
import time

from desktop_env.replay.locate import Found, Locator
from desktop_env.limits import limit
from desktop_env.tasks.solution import GuiStep, Target, chord_keys

log = logging.getLogger(__name__)

#: Seconds between two looks for a target or a condition.
POLL_S = 1.0
#: Wheel scrolls tried to bring a page element into view before giving up on scrolling.
MAX_SCROLLS = 40
#: How far (pixels) a page element may be found from where it was a look before and still be acted on.
MOVE_TOLERANCE_PX = 2
#: Pixels a page drag first moves the pointer with the button down (past Chromium's drag threshold).
DRAG_NUDGE_PX = 10
#: Seconds between the look that found a page element and the look that checks it held still.
SETTLE_S = 0.3


def as_action(c13: dict, env):
    """A computer_13 action dict in the environment's action space (pyautogui code, or the dict)."""
    if env.action_space_name == "computer_13":
        return c13
    from desktop_env.actions import parse_action, typing_code

    parsed = parse_action(c13, "computer_13", env.screen)
    return typing_code(parsed.text) if parsed.kind == "typing" else parsed.code


def _send(env, c13: dict, final: bool = False):
    """Send one input event of a GUI step: its ``final`` one through ``env.step`` (the GUI step is one step
    of the episode), the others through ``env.perform`` (input that is no agent step).

    Returns:
        ``(obs, reward, terminated, truncated, info)`` like ``env.step`` (for ``perform``: 0.0, False, False).
    """
    if final:
        return env.step(as_action(c13, env))
    obs, info = env.perform(as_action(c13, env))
    return obs, 0.0, False, False, info


def run_gui_step(env, step: GuiStep, deadline: float):
    """Replay one GUI step of a solution (``step.index`` names it in messages).

    Args:
        env: the :class:`~desktop_env.envs.desktop_env.DesktopEnv` of the episode.
        deadline: ``time.monotonic()`` past which the task attempt stops (the step stops before it).

    Returns:
        ``(obs, reward, terminated, truncated, info)`` like ``env.step``: those of the step's last
        action, with ``info`` holding ``gui_step`` (the step in words), ``located`` (the box acted on),
        ``locate_s`` and ``acted`` (the actions issued); on failure ``info["error"]`` says which step
        gave up on what, and nothing was acted.
    """
    index = step.index
    name = "oracle.wait" if step.act == "wait" else "oracle.locate"
    seconds = limit(name, step.timeout_s)
    end = min(time.monotonic() + seconds, deadline)
    label = f"GUI step solution[{index}] ({step.describe()})"
    info: dict = {"gui_step": step.describe()}
    t0 = time.monotonic()
    with Locator(env.controller, env.cdp_url, env.screen) as loc:
        if step.act == "wait":
            ok, seen = _poll(lambda: loc.holds(step.until), end)
            info["locate_s"] = round(time.monotonic() - t0, 1)
            if not ok:
                info["error"] = f"{label} gave up after {time.monotonic() - t0:.0f} s (limit {name}): {seen}"
                log.error("%s", info["error"])
            return env.observe(), 0.0, False, False, info
        boxes = {}
        targets = [(role, target) for role, target in (("", step.target), ("the drop target ", step.to)) if target]
        while True:
            for role, target in targets:
                found = _locate(env, loc, target, end, info)
                if found.box is None:
                    info["locate_s"] = round(time.monotonic() - t0, 1)
                    info["error"] = (f"{label} could not locate {role}{target.describe()} within "
                                     f"{time.monotonic() - t0:.0f} s (limit {name}): {found.reason}")
                    log.error("%s", info["error"])
                    return env.observe(), 0.0, False, False, info
                boxes[role] = found.box
            moved = _moved(loc, targets, boxes)
            if not moved or time.monotonic() + POLL_S > end:
                break
            info["relocated"] = info.get("relocated", 0) + 1  # a page still laying out: look again
            log.info("%s: %s moved while it was located; locating again", label, moved)
        box, to_box = boxes.get(""), boxes.get("the drop target ")
        if box is not None:
            info["located"] = box.to_json()
        info["locate_s"] = round(time.monotonic() - t0, 1)
        if step.act == "drag" and step.target.kind == "dom":
            result = _page_drag(env, loc, step, box, to_box, info)
            return (*result[:4], {**result[4], **info})
    acts = _acts(step, box, to_box)
    info["acted"] = acts
    result = None
    for n, c13 in enumerate(acts, 1):  # the GUI step is one step of the episode: its last event counts
        result = _send(env, c13, final=n == len(acts))
        if result[4].get("error") or result[2] or result[3]:
            break
    obs, reward, terminated, truncated, step_info = result
    return obs, reward, terminated, truncated, {**step_info, **info}


def _poll(look, end: float):
    """Call ``look() -> (ok, seen)`` until ok or ``end``; returns the last (ok, seen)."""
    while True:
        try:
            ok, seen = look()
        except Exception as exc:  # noqa: BLE001 - a query that failed now may answer on the next look
            ok, seen = False, f"the query failed: {exc}"
        if ok or time.monotonic() + POLL_S > end:
            return ok, seen
        time.sleep(POLL_S)


def _locate(env, loc: Locator, target: Target, end: float, info: dict) -> Found:
    """Poll until ``target`` can be acted on or ``end``; scrolls a page element into view with the wheel."""
    scrolls = 0
    while True:
        try:
            found = loc.find(target)
        except Exception as exc:  # noqa: BLE001 - see _poll
            found = Found(reason=f"the query failed: {exc}")
        if found.box is not None:
            return found
        if found.scroll and found.scroll_at and scrolls < MAX_SCROLLS:
            scrolls += 1
            x, y = found.scroll_at
            _send(env, {"action_type": "MOVE_TO", "x": x, "y": y})
            _send(env, {"action_type": "SCROLL", "dy": found.scroll})
            info["scrolls"] = scrolls
            continue
        if time.monotonic() + POLL_S > end:
            return found
        time.sleep(POLL_S)


def _page_drag(env, loc: Locator, step: GuiStep, box, to_box, info: dict):
    """Drag and drop in a web page (HTML5), each move confirmed by the page.

    Chromium starts its drag session only after the pointer moved with the button down, and under
    emulation that can come seconds after the move; a button released before then leaves the drag
    hanging with nothing dropped (a tweened ``dragTo`` lost Superset's drops that way). So: press,
    nudge until the page saw ``dragstart``, move onto the target and nudge within it until the page
    saw ``dragover`` (the drag session is running there), then release. Each wait gives up after the
    time limit ``oracle.drag`` and goes on: the solution's next ``wait`` tells whether the drop landed.
    """
    (x, y), (tx, ty) = box.point(step.at), to_box.point()
    seen = loc.drag_events(step.target, step.to, arm=True)
    last = None

    def act(c13: dict, final: bool = False):
        nonlocal last
        last = _send(env, c13, final)
        info.setdefault("acted", []).append(c13)
        return last[4].get("error") or last[2] or last[3]

    def nudge_until(key: str, at: tuple[int, int]) -> bool:
        end, n = time.monotonic() + limit("oracle.drag"), 0
        while True:
            events = loc.drag_events(step.target, step.to)
            if events.get(key):
                return True
            if time.monotonic() > end:
                log.warning("GUI step %s: the page saw no drag%s within %.0f s; going on", step.describe(), key,
                            limit("oracle.drag"))
                return False
            n += 1
            if act({"action_type": "MOVE_TO", "x": at[0] + DRAG_NUDGE_PX * (n % 2 * 2 - 1) // 2,
                    "y": at[1] + DRAG_NUDGE_PX // 4}):
                return False
            time.sleep(POLL_S / 4)

    if act({"action_type": "MOVE_TO", "x": x, "y": y}) or act({"action_type": "MOUSE_DOWN", "button": "left"}):
        return last
    if act({"action_type": "MOVE_TO", "x": x + DRAG_NUDGE_PX, "y": y + DRAG_NUDGE_PX // 2}):
        return last
    info["drag_started"] = bool(seen) and nudge_until("start", (x + DRAG_NUDGE_PX, y))
    for point in (((x + tx) // 2, (y + ty) // 2), (tx, ty)):
        if act({"action_type": "MOVE_TO", "x": point[0], "y": point[1]}):
            return last
    info["drag_over"] = bool(seen) and nudge_until("over", (tx, ty))
    act({"action_type": "MOUSE_UP", "button": "left"}, final=True)
    return last


def _moved(loc: Locator, targets: list, boxes: dict) -> str:
    """The first page (DOM) target whose box is no longer where it was located, "" when none moved.

    A web page still laying out (a panel filling in above, a font arriving) shifts its elements
    between the look and the act: a drag then starts on the element above. Desktop (accessibility)
    targets are not looked at again: a look costs seconds there, and their windows do not reflow.
    """
    if any(target.kind == "dom" for _, target in targets):
        time.sleep(SETTLE_S)
    for role, target in targets:
        if target.kind != "dom":
            continue
        try:
            again = loc.find(target).box
        except Exception as exc:  # noqa: BLE001 - see _poll
            log.debug("looking again for %s: %s", target.describe(), exc)
            again = None
        box = boxes[role]
        if again is None or max(abs(again.x - box.x), abs(again.y - box.y), abs(again.w - box.w),
                                abs(again.h - box.h)) > MOVE_TOLERANCE_PX:
            return f"{role}{target.describe()}"
    return ""


def _acts(step: GuiStep, box, to_box) -> list[dict]:
    """The computer_13 actions of a located step."""
    out: list[dict] = []
    x, y = box.point(step.at) if box is not None else (None, None)
    if step.act in ("click", "double_click", "triple_click", "right_click"):
        kind = {"click": ("CLICK", {}), "double_click": ("DOUBLE_CLICK", {}), "right_click": ("RIGHT_CLICK", {}),
                "triple_click": ("CLICK", {"num_clicks": 3})}[step.act]
        out.append({"action_type": kind[0], "x": x, "y": y, **kind[1]})
    elif step.act == "move":
        out.append({"action_type": "MOVE_TO", "x": x, "y": y})
    elif step.act == "drag":  # a page's drags go through _page_drag
        tx, ty = to_box.point()
        out += [{"action_type": "MOVE_TO", "x": x, "y": y}, {"action_type": "DRAG_TO", "x": tx, "y": ty}]
    elif step.act == "type":
        if box is not None:
            out.append({"action_type": "CLICK", "x": x, "y": y})
        out.append({"action_type": "TYPING", "text": step.text})
    elif step.act == "key":
        for chord in step.keys:
            keys = chord_keys(chord)
            out.append({"action_type": "HOTKEY", "keys": keys} if len(keys) > 1 else
                       {"action_type": "PRESS", "key": keys[0]})
    elif step.act == "scroll":
        if box is not None:
            out.append({"action_type": "MOVE_TO", "x": x, "y": y})
        out.append({"action_type": "SCROLL", "dy": step.amount})
    return out
