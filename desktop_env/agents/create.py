"""Which agent a ``--model`` name makes: a registered built-in one, else a model client."""
from __future__ import annotations

import difflib
from typing import Any

from desktop_env.agents.base import Agent
from desktop_env.errors import DesktopEnvError
from desktop_env.registry import AGENT_KINDS as KINDS, AGENTS


def builtin_agents() -> list[str]:
    """The names of the registered agents that need no model API."""
    return AGENTS.names()


def create_agent(model: str, agent: str = "prompted", **options: Any) -> Agent:
    """The agent for ``--model``: a built-in one by name, else a model client: prompted for actions
    (:class:`llm.LLMAgent`, ``agent="prompted"``) or Anthropic's computer tool
    (:class:`computer_use.ComputerUseAgent`, ``agent="computer-use"``) or the OpenAI Responses API's
    computer tool (:class:`openai_computer.OpenAIComputerAgent`, ``agent="openai-computer-use"``), or a
    grounding model's own grammar (:class:`grounding.GroundingAgent`, ``agent="ui-tars"`` or ``"qwen-vl"``).
    An ``agent`` of the form ``package.module:Class`` (or an installed ``desktop_env.agents`` entry point's name)
    is the user's own class (:mod:`desktop_env.agents.plugins`); ``model`` then only labels the results.

    Names within a typo of a built-in agent (e.g. ``orcale``) are refused with a
    did-you-mean rather than sent to a model API.

    Raises:
        DesktopEnvError: a near-miss of a built-in name, or a model client that cannot be made
            (e.g. no API key; the message names the variable).
    """
    from desktop_env.agents.plugins import create_plugin_agent, is_plugin

    if is_plugin(agent):  # the user's own class: docs/agents.md, "Your own agent"
        return create_plugin_agent(agent, model, **options)
    names = builtin_agents()
    if agent not in KINDS:
        raise DesktopEnvError(f"unknown agent kind {agent!r} (known: {', '.join(KINDS.names())}, or a plug-in "
                              "as package.module:ClassName)")
    if model in AGENTS:
        return AGENTS[model](**options)
    close = difflib.get_close_matches(model, names, n=1, cutoff=0.7)
    if close:
        raise DesktopEnvError(f"unknown model {model!r}: not a built-in agent ({', '.join(names)}); "
                              f"did you mean {close[0]!r}?")
    return KINDS[agent](model, **options)
