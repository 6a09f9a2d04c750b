"""The ``--agent`` kinds: how a model that is no built-in agent is driven, one factory each in
:data:`desktop_env.registry.AGENT_KINDS` (the model SDKs are imported when an agent is made, not here)."""
from __future__ import annotations

from typing import Any

from desktop_env.registry import AGENT_KINDS


@AGENT_KINDS.register("prompted")
def prompted(model: str, **options: Any):
    """A chat model prompted for pyautogui code or computer_13 JSON (:class:`llm.LLMAgent`)."""
    from desktop_env.agents.llm import LLMAgent

    return LLMAgent(model, **options)


@AGENT_KINDS.register("computer-use")
def computer_use(model: str, **options: Any):
    """Claude through Anthropic's computer tool (:class:`computer_use.ComputerUseAgent`)."""
    from desktop_env.agents.computer_use import ComputerUseAgent

    return ComputerUseAgent(model, **options)


@AGENT_KINDS.register("openai-computer-use")
def openai_computer_use(model: str, **options: Any):
    """A model with the OpenAI Responses API's computer tool (:class:`openai_computer.OpenAIComputerAgent`)."""
    from desktop_env.agents.openai_computer import OpenAIComputerAgent

    return OpenAIComputerAgent(model, **options)


@AGENT_KINDS.register("ui-tars")
def ui_tars(model: str, **options: Any):
    """A grounding model answering in UI-TARS's action grammar (:class:`grounding.GroundingAgent`)."""
    from desktop_env.agents.grounding import GroundingAgent

    return GroundingAgent(model, grammar="ui-tars", **options)


@AGENT_KINDS.register("qwen-vl")
def qwen_vl(model: str, **options: Any):
    """A grounding model answering in Qwen-VL's tool-call grammar (:class:`grounding.GroundingAgent`)."""
    from desktop_env.agents.grounding import GroundingAgent

    return GroundingAgent(model, grammar="qwen-vl", **options)
