"""The agent contract (reset, predict) and the registry run.py picks models from."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from desktop_env.errors import DesktopEnvError
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
    ``(response_text, actions)`` where each action is one of:

    - a pyautogui code string or a computer_13 dict (or WAIT/DONE/FAIL), run with ``env.step``,
      in real screen coordinates;
    - ``{"command": ..., "shell": bool}``: a command the harness runs in the guest as
      user ``user`` (only the oracle emits these, for ``cli`` tasks).

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


def register_agent(name: str):
    """Class decorator adding an agent under a model name (duplicates refused), in
    :data:`desktop_env.registry.AGENTS`."""

    def deco(cls):
        cls.name = name
        return AGENTS.register(name)(cls)

    return deco


def builtin_agents() -> list[str]:
    """The names of the registered agents that need no model API."""
    return AGENTS.names()


def create_agent(model: str, **options: Any) -> Agent:
    """The agent for ``--model``: a built-in one by name, else a model client (:class:`llm.LLMAgent`).

    Names within a typo of a built-in agent (e.g. ``orcale``) are refused with a
    did-you-mean rather than sent to a model API.

    Raises:
        DesktopEnvError: a near-miss of a built-in name, or a model client that cannot be made
            (e.g. no API key; the message names the variable).
    """
    names = builtin_agents()
    if model in AGENTS:
        return AGENTS[model](**options)
    close = difflib.get_close_matches(model, names, n=1, cutoff=0.7)
    if close:
        raise DesktopEnvError(f"unknown model {model!r}: not a built-in agent ({', '.join(names)}); "
                              f"did you mean {close[0]!r}?")
    from desktop_env.agents.llm import LLMAgent

    return LLMAgent(model, **options)
