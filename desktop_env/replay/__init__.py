"""The replay of a task's reference solution against a DesktopEnv, through its public API.

:class:`Replayer` runs one step of a solution (:func:`solution_steps` reads them from the task, typed:
:class:`ActionStep`, :class:`ShellStep`, :class:`GuiStep`, whose format and rules are
:mod:`desktop_env.tasks.solution`); :func:`step_failure` says whether a step failed. :mod:`.gui`
replays GUI steps, :mod:`.locate` finds what they act on (read-only). The oracle agent
(:mod:`desktop_env.agents.simple`) is its user.
"""
from desktop_env.replay.replayer import OUTPUT_TAIL_CHARS, Replayer, solution_steps, step_failure
from desktop_env.tasks.solution import ActionStep, GuiStep, ShellStep, SolutionStep

__all__ = ["OUTPUT_TAIL_CHARS", "ActionStep", "GuiStep", "Replayer", "ShellStep", "SolutionStep", "solution_steps",
           "step_failure"]
