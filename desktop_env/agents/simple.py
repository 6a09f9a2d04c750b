"""Agents that need no model: ``noop``, ``random`` and ``oracle`` (replays the task's reference solution)."""
from __future__ import annotations

import zlib

from desktop_env.agents.base import Agent, TurnInfo, register_agent
from desktop_env.errors import DesktopEnvError
from desktop_env.replay import Replayer, SolutionStep, solution_steps


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

    The solution is the task JSON's ``solution`` list (agent actions, shell steps and GUI steps that
    locate their target when replayed; see :mod:`desktop_env.tasks.solution`), or else ``solution.sh``
    beside the task file, run in the guest as user ``user``. Tasks tagged ``gui`` must be solved by
    GUI actions. ``predict`` gives the solution's typed steps, then DONE; ``act`` runs a step with a
    :class:`~desktop_env.replay.Replayer` (through the env's public API). A step that fails stops the
    episode as a broken task (``replays_solution``).

    Args:
        without_essential: replay without the items marked ``essential`` (``tasks verify`` checks
            that this scores 0.0 on ``cli+gui`` tasks).
    """

    replays_solution = True

    def __init__(self, action_space: str = "pyautogui", without_essential: bool = False, **options):
        super().__init__(action_space, **options)
        self.without_essential = bool(without_essential)

    def reset(self, task, env=None) -> None:
        self.last_turn = TurnInfo()
        self.actions = solution_steps(task, self.action_space, without_essential=self.without_essential)
        self.done = False

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        if self.done:
            return "solution replayed", ["DONE"]
        self.done = True
        return "replaying the reference solution", list(self.actions) + ["DONE"]

    def act(self, env, action, deadline: float):
        """Run a step of the solution with a :class:`~desktop_env.replay.Replayer`; the final DONE with ``env.step``."""
        if isinstance(action, SolutionStep):
            return Replayer(env).run(action, deadline)
        return env.step(action)


@register_agent("oracle_without_essential")
class OracleWithoutEssentialAgent(OracleAgent):
    """The oracle, replaying the reference solution without the items marked ``essential``: on a
    ``cli+gui`` task this must score 0.0 (``tasks verify`` checks it), or the GUI part is not needed."""

    def __init__(self, action_space: str = "pyautogui", **options):
        options.pop("without_essential", None)
        super().__init__(action_space, without_essential=True, **options)
