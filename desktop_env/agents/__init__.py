"""Agents for run.py: a small contract and a registry by model name."""
from desktop_env.agents.base import Agent, register_agent
from desktop_env.agents.create import create_agent

__all__ = ["Agent", "create_agent", "register_agent"]
