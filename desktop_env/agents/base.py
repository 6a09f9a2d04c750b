"""The agent contract (reset, predict) and the decorator that registers an agent by model name."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop_env.registry import AGENTS


@dataclass
class TurnInfo:
    """What the last ``predict`` cost and whether its reply parsed (None: not known / built-in agent)."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    parse_error: str | None = None


class Agent:
    """Decides actions from observations.

    ``reset(task, env)`` starts an episode; ``predict(instruction, obs)`` returns
    ``(response_text, actions)`` where each action is a pyautogui code string or a computer_13
    dict (or WAIT/DONE/FAIL), in real screen coordinates. The harness carries out each with ``act(env, action, deadline)``, which runs
    ``env.step(action)``; the oracle overrides it to replay its reference solution's typed steps
    (:mod:`desktop_env.replay`: shell steps and GUI steps besides actions).

    An empty action list with ``last_turn.parse_error`` set means the reply had no usable
    action; the harness records that turn and asks again. ``last_turn`` also carries the
    model call's tokens and latency; ``screen_mapping`` (a ``parsing.ScreenMapping``) is
    set by agents that show the model a resized screen.
    """

    name = ""
    screen_mapping = None
    #: True for an agent that replays a task's reference solution: the harness then treats a
    #: failing step (non-zero exit, action error, time limit) as a broken task, not a wrong result.
    replays_solution = False

    def __init__(self, action_space: str = "pyautogui", **_options: Any):
        self.action_space = action_space
        self.last_turn = TurnInfo()

    def reset(self, task, env=None) -> None:
        """Start an episode on ``task`` (a TaskSpec) in ``env`` (the DesktopEnv, for agents that need it)."""
        self.last_turn = TurnInfo()

    def close(self) -> None:
        """Release what the agent holds (servers, clients); called once when the harness is done with it."""

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        raise NotImplementedError

    def act(self, env, action, deadline: float):
        """Carry out one action of ``predict``'s list in ``env``: ``env.step(action)``.

        The harness calls it as it would call ``env.step``: what it raises is classified as the
        environment's errors are, not as the agent's.

        Args:
            deadline: ``time.monotonic()`` past which the task attempt stops.

        Returns:
            ``(obs, reward, terminated, truncated, info)`` as ``env.step`` gives them.
        """
        return env.step(action)


def register_agent(name: str):
    """Class decorator adding an agent under a model name (duplicates refused), in
    :data:`desktop_env.registry.AGENTS`."""

    def deco(cls):
        cls.name = name
        return AGENTS.register(name)(cls)

    return deco
