"""Agents that need no model: ``noop``, ``random`` and ``oracle`` (replays the task's reference solution)."""
from __future__ import annotations

import zlib

from desktop_env.agents.base import Agent, TurnInfo, register_agent
from desktop_env.errors import DesktopEnvError, TaskConfigError


@register_agent("noop")
class NoopAgent(Agent):
    """Does nothing, then DONE: the score of the untouched start state."""

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        return "nothing to do", ["DONE"]


@register_agent("random")
class RandomAgent(Agent):
    """One random valid computer_13 action per turn (moves, clicks, scrolls, keys, short typing).

    Reproducible: each task's actions come from ``seed`` mixed with the task id (CRC-32),
    so they do not depend on which worker runs the task or in which order.

    Raises:
        DesktopEnvError: with ``action_space`` other than computer_13.
    """

    def __init__(self, action_space: str = "computer_13", seed: int = 0, **options):
        super().__init__(action_space, **options)
        if action_space != "computer_13":
            raise DesktopEnvError("the random agent emits computer_13 actions: run with --action_space computer_13")
        self.seed = int(seed or 0)
        self.space = None
        self.task_id = ""

    def reset(self, task, env=None) -> None:
        self.last_turn = TurnInfo()
        self.task_id = getattr(task, "id", "") or ""
        self.space = None

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        from desktop_env.actions import Computer13Space

        shot = obs.get("screenshot")
        screen = (shot.shape[1], shot.shape[0]) if getattr(shot, "ndim", 0) == 3 else (1920, 1080)
        if self.space is None or self.space.screen != screen:
            self.space = Computer13Space(screen, seed=(self.seed ^ zlib.crc32(self.task_id.encode())) & 0xFFFFFFFF)
        action = self.space.sample()
        return "random action", [action]


@register_agent("oracle")
class OracleAgent(Agent):
    """Replays the task's reference solution, then DONE.

    The solution is the task JSON's ``solution`` list (items
    ``{"action_space": "pyautogui"|"computer_13", "action": ...}`` or
    ``{"command": ..., "shell": true}``), or else ``solution.sh`` beside the task file,
    run in the guest as user ``user``. Tasks tagged ``gui`` must be solved by GUI actions.
    A step that fails stops the episode as a broken task (``replays_solution``).
    """

    replays_solution = True

    def reset(self, task, env=None) -> None:
        self.last_turn = TurnInfo()
        self.actions = solution_actions(task, self.action_space)
        self.done = False

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        if self.done:
            return "solution replayed", ["DONE"]
        self.done = True
        return "replaying the reference solution", list(self.actions) + ["DONE"]


def solution_actions(task, action_space: str) -> list:
    """The reference solution of ``task`` as harness actions.

    Raises:
        TaskConfigError: no solution, a malformed item, a command in a ``gui`` task, or an
            action written for another action space.
    """
    where = str(task.path) if task.path else task.id
    items = task.extra.get("solution")
    if items is None and task.path is not None and (task.path.parent / "solution.sh").exists():
        items = [{"command": (task.path.parent / "solution.sh").read_text(), "shell": True}]
    if not items:
        raise TaskConfigError("has no reference solution (a `solution` list or a solution.sh beside it)",
                              where, "solution")
    if not isinstance(items, list):
        raise TaskConfigError("must be a list", where, "solution")
    actions = []
    for i, item in enumerate(items):
        field = f"solution[{i}]"
        if not isinstance(item, dict):
            raise TaskConfigError("must be an object with `action` or `command`", where, field)
        if "command" in item:
            if "gui" in task.tags:
                raise TaskConfigError("is a command, but the task is tagged `gui`: solve it with GUI actions",
                                      where, field)
            actions.append({"command": item["command"], "shell": bool(item.get("shell", False))})
        elif "action" in item:
            space = item.get("action_space", "pyautogui")
            special = isinstance(item["action"], str) and item["action"] in ("WAIT", "DONE", "FAIL")
            if space != action_space and not special and not (isinstance(item["action"], dict) and
                                                              item["action"].get("action_type") == "WAIT"):
                raise TaskConfigError(f"is written for action space {space!r}; run with --action_space {space}",
                                      where, field)
            actions.append(item["action"])
        else:
            raise TaskConfigError("needs `action` or `command`", where, field)
    return actions
