"""The Replayer: the steps of a task's reference solution run against a DesktopEnv through its public API."""
from __future__ import annotations

import logging
import math
import time

from desktop_env.errors import TaskConfigError
from desktop_env.limits import TimeLimitExceeded, limit
from desktop_env.replay.gui import run_gui_step
from desktop_env.tasks.solution import ActionStep, GuiStep, ShellStep, SolutionStep, solution_items

log = logging.getLogger(__name__)

#: Characters of a shell step's stdout and stderr kept in its info (the end of each).
OUTPUT_TAIL_CHARS = 4000


def _tail(text, limit_chars: int = OUTPUT_TAIL_CHARS) -> str:
    text = text or ""
    return text if len(text) <= limit_chars else "[...]" + text[-limit_chars:]


def solution_steps(task, action_space: str, without_essential: bool = False) -> list[SolutionStep]:
    """The steps of ``task``'s reference solution that the oracle replays (:func:`solution_items`, checked).

    Args:
        action_space: the env's action space; an agent action written for another one is refused
            (WAIT/DONE/FAIL fit either).
        without_essential: leave out the steps marked ``essential`` (the ablated replay of ``tasks verify``).

    Raises:
        TaskConfigError: see :func:`~desktop_env.tasks.solution.solution_items`, or an action written for
            another action space.
    """
    where = str(task.path) if task.path else task.id
    steps = []
    for step in solution_items(task):
        if without_essential and step.essential:
            continue
        if isinstance(step, ActionStep):
            action = step.action
            special = (isinstance(action, str) and action in ("WAIT", "DONE", "FAIL")) or (
                isinstance(action, dict) and action.get("action_type") == "WAIT")
            if step.action_space != action_space and not special:
                raise TaskConfigError(f"is written for action space {step.action_space!r}; run with --action_space "
                                      f"{step.action_space}", path=where, field=f"solution[{step.index}]")
        steps.append(step)
    return steps


class Replayer:
    """Replays a reference solution's steps against a :class:`~desktop_env.envs.desktop_env.DesktopEnv`,
    through its public API only:

    - an :class:`ActionStep` is ``env.step(action)``;
    - a :class:`ShellStep` is ``env.run_command`` (killed at the time limit ``oracle.command`` or
      at the task's deadline);
    - a :class:`GuiStep` locates its target (read-only: ``env.controller``, ``env.cdp_url``, ``env.screen``),
      then sends its input events, the last through ``env.step`` (one GUI step is one step of the
      episode) and those before it through ``env.perform``; a ``wait`` polls its condition
      (:mod:`desktop_env.replay.gui`).

    A step that fails raises nothing: its ``info`` says so, and :func:`step_failure` reads it.
    """

    def __init__(self, env):
        self.env = env

    def run(self, step: SolutionStep, deadline: float = math.inf):
        """Run one step of the solution.

        Args:
            deadline: ``time.monotonic()`` past which the task attempt stops (a step stops before it).

        Returns:
            ``(obs, reward, terminated, truncated, info)`` as ``env.step`` gives them. A shell step observes
            nothing (``obs`` is None) and its ``info`` holds the command, ``command_returncode``,
            ``command_stdout`` and ``command_stderr`` (their ends), ``command_s``, and ``time_limit`` when it
            was killed at a limit; a GUI step's ``info`` holds ``gui_step`` (the step in words), ``located``,
            ``locate_s`` and ``acted`` (see :func:`~desktop_env.replay.gui.run_gui_step`).
        """
        if isinstance(step, ShellStep):
            return None, 0.0, False, False, self._run_shell(step, deadline)
        if isinstance(step, GuiStep):
            return run_gui_step(self.env, step, deadline)
        return self.env.step(step.action)

    def _run_shell(self, step: ShellStep, deadline: float) -> dict:
        command = step.command
        seconds = max(1.0, min(limit("oracle.command"), deadline - time.monotonic() + 5))
        info: dict = {"command": _tail(command if isinstance(command, str) else " ".join(command), 1000)}
        t0 = time.monotonic()
        reply = self.env.run_command(command, shell=step.shell, timeout_s=seconds)
        if reply["timed_out"]:
            info["time_limit"] = str(TimeLimitExceeded("oracle.command", seconds, f"command {info['command'][:200]!r}"))
            log.error("%s", info["time_limit"])
        info.update(command_returncode=reply.get("returncode"), command_stdout=_tail(reply.get("output")),
                    command_stderr=_tail(reply.get("error")), command_s=round(time.monotonic() - t0, 2))
        return info


def step_failure(info: dict) -> str | None:
    """Why a step of a solution failed, from its ``info`` (a time limit, a non-zero exit, an action error), or None."""
    if info.get("time_limit"):
        return info["time_limit"]
    if "command_returncode" in info and info["command_returncode"] != 0:
        stderr = " ".join((info.get("command_stderr") or "").split())[-600:]
        return f"command {info.get('command', '')[:200]!r} exited with {info['command_returncode']}" + \
            (f"; stderr: {stderr}" if stderr else "")
    if info.get("error"):
        return str(info["error"])[:800]
    return None
