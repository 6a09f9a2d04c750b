"""DesktopEnv: the Gymnasium environment over a desktop VM (reset in about a second, observe, act, score)."""
from __future__ import annotations

import io
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

from desktop_env.actions import (Computer13Space, InvalidAction, PyAutoGUISpace, UnicodeText, parse_action,
                                 typing_code)
from desktop_env.controllers.python import PythonController
from desktop_env.errors import DesktopEnvError, GuestServerError, TaskConfigError, VMError
from desktop_env.limits import limit, typing_limit
from desktop_env.providers.base import Provider, create_provider

log = logging.getLogger(__name__)

A11Y_MAX_CHARS = 2_000_000


def observation_space(screen: tuple[int, int]) -> gym.spaces.Dict:
    """The observation space of a desktop of ``screen`` (width, height)."""
    width, height = screen
    return gym.spaces.Dict({
        "screenshot": gym.spaces.Box(0, 255, (height, width, 3), np.uint8),
        "accessibility_tree": UnicodeText(A11Y_MAX_CHARS),
        "terminal": UnicodeText(A11Y_MAX_CHARS),
        "instruction": UnicodeText(100_000),
        "error": UnicodeText(100_000),
    })


class DesktopEnv(gym.Env):
    """A live desktop in a VM, as a Gymnasium environment.

    ``reset(options={"task_config": task})`` restores the image's ready state (about a
    second with the QEMU provider), or the warm state the task's ``snapshot`` names (a tool
    already running; built once on first use, see :mod:`desktop_env.envs.warm`), runs the
    task's setup steps and returns the first observation. ``step(action)`` runs one action (pyautogui code or a computer_13 dict,
    or WAIT/DONE/FAIL) and returns ``(obs, reward, terminated, truncated, info)``: DONE
    and FAIL terminate and score the task (reward = score); reaching ``max_steps``
    truncates and scores the state reached. The step that scores also gives why in
    ``info["reason"]`` (``{"kind", "text", "metric"}``: e.g. ``value_mismatch``, "Sheet1!B3:
    expected 5, got 4"; kinds in docs/tasks.md). An invalid action never raises: its error
    is in ``info["error"]`` and ``obs["error"]``. When the in-VM server does not answer,
    ``step`` probes its health check (bounded) and says so in ``info["error"]``
    (``info["server_healthy"]`` is False); ``reset`` recovers by reverting. When the VM
    itself died (its QEMU is gone), ``step`` raises :class:`VMError`.

    Beside the agent's ``step``, two public methods act without being an agent step (neither uses up
    ``max_steps`` nor scores): ``perform(action)`` sends input that is part of a larger step (the
    reference-solution replay sends a GUI step's scrolls and presses there and its final event
    through ``step``, so one GUI step counts as one step), and ``run_command(command)`` runs a command
    in the guest (the replay's shell steps; agents have no shell action).

    Observations are dicts: ``screenshot`` (H x W x 3 uint8, taken host-side when the
    provider can), ``accessibility_tree`` (XML, when ``require_a11y_tree``),
    ``terminal`` (when ``require_terminal``), ``instruction`` and ``error``.

    Args:
        provider_name: ``qemu`` (default) or another registered provider.
        path_to_vm: image name, profile or image folder (default: the ``image_profile``'s newest image).
        snapshot_name: the snapshot reset restores (default ``init_state``).
        action_space: ``pyautogui`` or ``computer_13``.
        screen_size: (width, height); must match the image (its ready state freezes it).
        headless: kept for compatibility (VMs here never open a window; use ``desktop-env vm vnc``).
        os_type: kept for compatibility with callers that pass it; the guest is always the image's Linux.
        require_a11y_tree, require_terminal: include those in observations.
        cache_dir: cache directory for images and runtime state.
        accel: ``auto``, ``kvm`` or ``tcg``.
        image_profile: profile whose newest image is used when ``path_to_vm`` is None.
        max_steps: steps after which an episode is truncated.
        provider: an already constructed provider (overrides the above).
        action_timeout_s: server-side limit for one pyautogui action (None: the time limit
            ``action.code``, see ``desktop_env.limits``); a longer action is killed and reported
            in ``info["error"]``. Typing has its own limit, growing with the text.
        download_mirror: a folder made by ``desktop-env mirror``: every URL a task fetches (setup
            ``download`` steps, ``cloud_file`` and URL ``local_file`` getters) is served from it after
            its hash is checked, and no download is attempted; a URL it lacks fails the task's setup.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, provider_name: str = "qemu", path_to_vm: str | None = None,
                 snapshot_name: str = "init_state", action_space: str = "pyautogui",
                 screen_size: tuple[int, int] | None = None, headless: bool = True,
                 require_a11y_tree: bool = True, require_terminal: bool = False,
                 cache_dir: str | Path | None = None, accel: str = "auto", image_profile: str = "base",
                 max_steps: int = 15, render_mode: str | None = "rgb_array", provider: Provider | None = None,
                 os_type: str = "Ubuntu", action_timeout_s: float | None = None,
                 download_mirror: str | Path | None = None, **provider_kwargs: Any):
        if action_space not in ("pyautogui", "computer_13"):
            raise ValueError(f"action_space must be 'pyautogui' or 'computer_13', not {action_space!r}")
        self.action_space_name = action_space
        self.snapshot_name = snapshot_name
        self.require_a11y_tree = require_a11y_tree
        self.require_terminal = require_terminal
        self.max_steps = max_steps
        self.action_timeout_s = action_timeout_s
        self.render_mode = render_mode
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.download_mirror = None
        if download_mirror is not None:
            from desktop_env.configs.mirror import Mirror

            self.download_mirror = Mirror.open(download_mirror)  # a missing manifest fails before any VM starts
        self.provider = provider or create_provider(
            provider_name, image=path_to_vm or image_profile, cache_dir=self.cache_dir, accel=accel,
            screen_size=screen_size, headless=headless, **provider_kwargs)
        self.screen = self.provider.image.screen if hasattr(self.provider, "image") else tuple(screen_size)
        self.observation_space = observation_space(self.screen)
        if action_space == "pyautogui":
            self.action_space = PyAutoGUISpace(1_000_000)
            self.action_space.screen = self.screen
        else:
            self.action_space = Computer13Space(self.screen)
        self.controller: PythonController | None = None
        self.task = None
        self.instruction = ""
        self._started = False
        self._reset_done = False
        self._steps = 0
        self._last_action = None
        self._actions: list = []
        self._evaluated = None  # the Verdict of this episode, once scored
        self._work = Path(tempfile.mkdtemp(prefix="desktop-env-episode-"))

    # -- lifecycle ------------------------------------------------------------------
    def _ensure_started(self) -> None:
        if self._started:
            return
        self.provider.start()
        self.controller = PythonController(self.provider.server.host, self.provider.server.port,
                                           token=self.provider.token)
        self._started = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Restore the snapshot, set the task up, return ``(observation, info)``.

        Args:
            seed: seeds the action space's sampler (the desktop itself is not seedable).
            options: ``{"task_config": TaskSpec | dict | path}``; without it the desktop is
                just restored.

        Raises:
            TaskConfigError: the task config is malformed.
            DesktopEnvError: the VM or a setup step failed.
        """
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        options = options or {}
        task = options.get("task_config")
        self.task = self._load_task(task) if task is not None else None
        self.instruction = getattr(self.task, "instruction", "") or ""
        recipe = self._warm_state_recipe()
        state_name = recipe.name if recipe is not None else None
        t0 = time.monotonic()
        fresh = not self._started
        self._ensure_started()
        build_s = 0.0
        if state_name is not None:
            from desktop_env.envs.warm import ensure_state

            t1 = time.monotonic()
            warm = ensure_state(self.provider, state_name, recipe)
            build_s = time.monotonic() - t1
            self.provider.restore_state(warm)
        elif not fresh or self.snapshot_name != "init_state":
            self.provider.revert_to_snapshot(self.snapshot_name)
        revert_s = time.monotonic() - t0 - build_s
        self._steps = 0
        self._last_action = None
        self._actions = []
        self._evaluated = None
        setup_s = 0.0
        if self.task is not None:
            t1 = time.monotonic()
            self._run_setup()
            setup_s = time.monotonic() - t1
        self._reset_done = True
        obs = self._observe()
        return obs, {"revert_s": revert_s, "setup_s": setup_s, "task_id": getattr(self.task, "id", None),
                     "state": state_name or self.snapshot_name, "state_build_s": build_s}

    def _warm_state_recipe(self):
        """The recipe of the warm state this reset restores (the task's ``snapshot`` when it names
        one the image has), or None for ``init_state`` / the constructor's ``snapshot_name``."""
        if self.task is None or self.snapshot_name != "init_state" or not getattr(self.task, "warm_state", None):
            return None
        from desktop_env.envs.warm import check_without_warm_states, state_for_task

        image = getattr(self.provider, "image", None)
        if image is None or not self.provider.warm_states:
            check_without_warm_states([self.task], self.provider.name)
            log.warning("task %s names the snapshot %r; the %s provider has no warm states: starting from init_state",
                        self.task.id, self.task.snapshot, self.provider.name)
            return None
        return state_for_task(self.task, image)

    def _load_task(self, task):
        from desktop_env.tasks import TaskSpec, load_task

        if isinstance(task, TaskSpec):
            return task
        if isinstance(task, (str, Path)):
            return load_task(task)
        if isinstance(task, dict):
            return TaskSpec.from_json(task)
        raise TaskConfigError(f"task_config must be a TaskSpec, a dict or a path, not {type(task).__name__}")

    def _context(self):
        from desktop_env.session import SetupContext

        cache = self._work / (getattr(self.task, "id", None) or "no-task")
        cache.mkdir(parents=True, exist_ok=True)
        cdp = self.provider.cdp
        return SetupContext(controller=self.controller, task=self.task, cache_dir=cache,
                            cdp_port_host=cdp.port if cdp else None, vm_host=self.provider.server.host,
                            download_mirror=self.download_mirror, screenshot=self.provider.screenshot)

    def _run_setup(self) -> None:
        from desktop_env.configs.dispatch import run_config

        run_config(self._context())

    # -- acting ---------------------------------------------------------------------
    def step(self, action):
        """Run one agent action (it counts toward ``max_steps``); see the class docstring for the return values."""
        if not self._reset_done:
            raise DesktopEnvError("step() called before reset(): call env.reset() first")
        self._steps += 1
        info, error, terminated = self._act(action, may_end=True)
        reward = 0.0
        truncated = not terminated and self._steps >= self.max_steps
        if terminated or truncated:
            verdict = self.evaluate()
            reward = float(verdict)
            info["score"] = reward
            reason = getattr(verdict, "reason", None)
            if reason is not None:
                info["reason"] = reason.to_json()
            if getattr(verdict, "postconfig_errors", None):
                info["postconfig_errors"] = list(verdict.postconfig_errors)
        if error:
            info["error"] = error
        obs = self._observe(error)
        info["done"] = terminated or truncated
        return obs, reward, terminated, truncated, info

    def perform(self, action) -> tuple[dict, dict]:
        """Run one action as input that is not an agent step: it uses up none of ``max_steps``, never
        ends the episode and never scores (``DONE`` and ``FAIL`` are refused as invalid).

        For a caller acting on the agent's behalf with several input events where the episode counts
        one step: the reference-solution replay (:mod:`desktop_env.replay`) sends a GUI step's
        scrolls, presses and moves through here and its final event through :meth:`step`.

        Returns:
            ``(obs, info)``: the observation after the action and ``info`` as :meth:`step` gives it
            (``step``: the agent steps so far, unchanged; ``action_s``; ``error`` when the action
            failed; ``done``: always False). An invalid action never raises.
        """
        if not self._reset_done:
            raise DesktopEnvError("perform() called before reset(): call env.reset() first")
        info, error, _ = self._act(action, may_end=False)
        if error:
            info["error"] = error
        obs = self._observe(error)
        info["done"] = False
        return obs, info

    def _act(self, action, may_end: bool) -> tuple[dict, str, bool]:
        """Parse and run ``action``; returns ``(info, error, terminated)`` (DONE/FAIL terminate when ``may_end``)."""
        info: dict[str, Any] = {"step": self._steps}
        error = ""
        terminated = False
        t0 = time.monotonic()
        try:
            parsed = parse_action(action, self.action_space_name, self.screen)
        except InvalidAction as exc:
            parsed, error = None, f"invalid action: {exc}"
        if parsed is not None and not may_end and parsed.kind in ("DONE", "FAIL"):
            parsed, error = None, f"invalid action: {parsed.kind} ends the episode; only step() takes it"
        if parsed is not None:
            self._last_action = parsed.kind if parsed.kind in ("DONE", "FAIL") else action
            self._actions.append(action)
            try:
                error = self._execute(parsed)
            except GuestServerError as exc:
                self._raise_if_vm_died(exc)
                error = f"the in-VM server failed to run the action: {exc}"
                if exc.status is None:
                    info["server_healthy"] = self.server_healthy()
                    if not info["server_healthy"]:
                        error += "; its health check does not answer either (reset() reverts to the snapshot)"
            if parsed.kind in ("DONE", "FAIL"):
                terminated = True
        info["action_s"] = time.monotonic() - t0
        return info, error, terminated

    def _execute(self, parsed) -> str:
        if parsed.kind in ("DONE", "FAIL"):
            return ""
        if parsed.kind == "WAIT":
            time.sleep(parsed.seconds)
            return ""
        if parsed.kind == "typing":
            reply = self.controller.run_pyautogui(typing_code(parsed.text), timeout_s=typing_limit(parsed.text))
        else:
            reply = self.controller.run_pyautogui(parsed.code, timeout_s=self.action_timeout_s or limit("action.code"))
        if reply.get("returncode", 0) != 0 or reply.get("status") == "error":
            return (reply.get("error") or reply.get("message") or reply.get("output") or "action failed").strip()
        return ""

    def run_command(self, command: str | list[str], shell: bool = False, timeout_s: float | None = None) -> dict:
        """Run a command in the guest as user ``user``: not an agent action, not a step, never scored.

        Agents have no shell action (``step`` rejects ``{"command": ...}``); the harness's agents never
        reach this. It is for callers driving the env themselves, such as the reference-solution replay
        (:mod:`desktop_env.replay`), whose shell steps run here.

        Args:
            command: an argv list, or a string run by ``sh -c`` when ``shell``.
            timeout_s: the guest kills the command after this (default: the time limit ``oracle.command``).

        Returns:
            ``returncode`` (None when it was killed at the limit), ``output`` and ``error`` (its stdout
            and stderr) and ``timed_out``.
        """
        if not self._reset_done:
            raise DesktopEnvError("run_command() called before reset(): call env.reset() first")
        seconds = timeout_s if timeout_s is not None else limit("oracle.command")
        try:
            reply = self.controller.execute(command, shell=shell, timeout_s=seconds)
        except GuestServerError as exc:
            if exc.status != 504:  # 504: the guest killed the command at the limit
                raise
            body = exc.body if isinstance(exc.body, dict) else {}
            return {"returncode": None, "output": body.get("output"), "error": body.get("error"), "timed_out": True}
        return {"returncode": reply.get("returncode"), "output": reply.get("output"), "error": reply.get("error"),
                "timed_out": False}

    def evaluate(self):
        """Score the current state against the task's evaluator, once per episode (later calls give the same).

        Returns:
            a :class:`~desktop_env.evaluators.evaluator.Verdict`: the score in [0, 1], a float, with
            ``.reason`` (why; also in ``info["reason"]`` of the step that ended the episode).
        """
        from desktop_env.evaluators.evaluator import Verdict, evaluate
        from desktop_env.evaluators.reasons import UNEXPLAINED, Reason

        if self.task is None:
            return Verdict(0.0, Reason(UNEXPLAINED, "no task was given to reset(), so there is nothing to score"))
        if self._evaluated is None:
            self._evaluated = evaluate(self.task, self._context(), self._last_action)
        return self._evaluated

    def server_healthy(self, timeout_s: float = 10.0) -> bool:
        """Whether the in-VM server's ``/health`` answers "ok" within about ``timeout_s`` seconds."""
        if self.controller is None:
            return False
        try:
            return self.controller.health(timeout_s=timeout_s).get("status") == "ok"
        except GuestServerError as exc:
            log.warning("in-VM server health check failed: %s", exc)
            return False

    def _raise_if_vm_died(self, cause: Exception, wait: bool = True) -> None:
        """Raise :class:`VMError` when ``cause`` came from the VM's process being gone. A killed QEMU closes its
        sockets (the server's forwarded port refuses) before the kernel reaps it, so its exit is waited for, up
        to the time limit ``vm.exit``; a VM still running then is left to the caller's own handling. With
        ``wait=False`` the process is looked at once: for a caller that has waited the limit out already."""
        deadline = time.monotonic() + (limit("vm.exit") if wait else 0.0)
        while self.provider.is_running():
            if time.monotonic() >= deadline:
                return
            time.sleep(0.1)
        raise VMError(f"the VM stopped running (its {self.provider.name} process is gone): {cause}; "
                      "reset() starts a fresh one from the snapshot") from cause

    # -- observing ------------------------------------------------------------------
    def screenshot_png(self) -> bytes:
        """PNG of the screen: host-side when the provider can, else through the in-VM server.

        Raises:
            VMError: the VM is not running any more.
        """
        data, waited = None, False
        try:
            data = self.provider.screenshot()
        except DesktopEnvError as exc:
            self._raise_if_vm_died(exc)
            waited = True  # the VM was seen running through a whole vm.exit: the server's failure needs no 2nd wait
            log.warning("host-side screenshot failed (%s); asking the in-VM server", exc)
        if data:
            return data
        try:
            return self.controller.screenshot()
        except GuestServerError as exc:
            self._raise_if_vm_died(exc, wait=not waited)
            raise

    def observe(self) -> dict:
        """The current observation, as ``reset``/``step`` return it, without acting."""
        if not self._reset_done:
            raise DesktopEnvError("observe() called before reset(): call env.reset() first")
        return self._observe()

    @property
    def step_count(self) -> int:
        """Steps taken since the last reset (what ``max_steps`` limits)."""
        return self._steps

    @property
    def cdp_url(self) -> str | None:
        """``http://host:port`` of the guest Chromium's DevTools endpoint as the host reaches it, or None
        when the provider forwards no port to it."""
        cdp = getattr(self.provider, "cdp", None)
        return f"http://{cdp.host}:{int(cdp.port)}" if cdp else None

    def _observe(self, error: str = "") -> dict:
        png = self.screenshot_png()
        with Image.open(io.BytesIO(png)) as img:
            pixels = np.asarray(img.convert("RGB"), dtype=np.uint8)
        obs = {"screenshot": pixels, "accessibility_tree": "", "terminal": "", "instruction": self.instruction,
               "error": error}
        if self.require_a11y_tree:
            try:
                obs["accessibility_tree"] = (self.controller.accessibility_tree() or "")[:A11Y_MAX_CHARS]
            except GuestServerError as exc:
                log.warning("accessibility tree unavailable: %s", exc)
        if self.require_terminal:
            try:
                obs["terminal"] = (self.controller.terminal_output() or "")[:A11Y_MAX_CHARS]
            except GuestServerError as exc:
                log.warning("terminal text unavailable: %s", exc)
        return obs

    def start_recording(self, out_path: str | Path, fps: float = 2.0) -> None:
        """Record the screen into ``out_path`` (MP4): frames grabbed host-side, encoded on the host."""
        from desktop_env.recording import HostRecorder

        if not self._started:
            raise DesktopEnvError("start_recording() called before reset(): call env.reset() first")
        if getattr(self, "_recorder", None) is not None:
            raise DesktopEnvError("a recording is already running; end it with end_recording()")
        self._recorder = HostRecorder(self.screenshot_png, Path(out_path), fps)

    def end_recording(self) -> Path:
        """Stop the recording started by :meth:`start_recording`; returns the MP4's path."""
        recorder, self._recorder = getattr(self, "_recorder", None), None
        if recorder is None:
            raise DesktopEnvError("no recording is running")
        return recorder.stop()

    def render(self):
        """The current screen as an H x W x 3 uint8 array."""
        with Image.open(io.BytesIO(self.screenshot_png())) as img:
            return np.asarray(img.convert("RGB"), dtype=np.uint8)

    def close(self) -> None:
        """Stop the VM and release everything it held."""
        if getattr(self, "_recorder", None) is not None:
            try:
                self.end_recording()
            except Exception:
                log.exception("ending the recording")
        try:
            if self.controller is not None:
                self.controller.close()
        except Exception:
            log.exception("closing the controller")
        try:
            self.provider.stop()
        finally:
            self._started = False
            self._reset_done = False
            import shutil
            shutil.rmtree(self._work, ignore_errors=True)

    def __enter__(self) -> "DesktopEnv":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
