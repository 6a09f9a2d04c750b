"""The oracle's shell steps (replay.Replayer through DesktopEnv.run_command)
against the real in-VM server on the host: what traj.jsonl records, and which steps count as failed; and
the input a GUI step sends through DesktopEnv.perform, which uses up no agent step."""
from __future__ import annotations

import time

import pytest

from desktop_env import limits
from desktop_env.envs.desktop_env import DesktopEnv
from desktop_env.replay import OUTPUT_TAIL_CHARS, Replayer, ShellStep, step_failure

pytestmark = pytest.mark.xvfb


class _ServerEnv:
    """DesktopEnv's solution-command method over the host's in-VM server (no VM)."""

    run_command = DesktopEnv.run_command

    def __init__(self, client):
        self.controller, self._reset_done = client, True


def _shell(env, command: str) -> dict:
    """The info of one shell step replayed in ``env``."""
    obs, reward, terminated, truncated, info = Replayer(env).run(ShellStep(command, shell=True), time.monotonic() + 60)
    assert obs is None and reward == 0.0 and not (terminated or truncated)
    return info


def test_a_command_step_records_exit_status_stdout_stderr_and_time(client):
    env = _ServerEnv(client)
    info = _shell(env, "echo made; echo warn >&2")
    assert info["command_returncode"] == 0 and info["command_stdout"] == "made\n"
    assert info["command_stderr"] == "warn\n" and info["command_s"] >= 0
    assert step_failure(info) is None


def test_long_output_is_truncated_to_its_end(client):
    env = _ServerEnv(client)
    info = _shell(env, "seq 1 20000; echo the-end")
    assert info["command_stdout"].startswith("[...]") and info["command_stdout"].endswith("the-end\n")
    assert len(info["command_stdout"]) <= OUTPUT_TAIL_CHARS + 5


def test_a_failing_command_step_names_its_exit_status_and_stderr(client):
    env = _ServerEnv(client)
    info = _shell(env, "echo 'kernel died' >&2; exit 1")
    failure = step_failure(info)
    assert "exited with 1" in failure and "kernel died" in failure


def test_a_command_step_past_its_limit_is_a_failure_naming_the_limit(client, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "oracle.command", (1.0, "test"))
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    env = _ServerEnv(client)
    info = _shell(env, "echo started; sleep 30")
    assert info["command_returncode"] is None and "started" in info["command_stdout"]
    assert "time limit oracle.command (1 s" in step_failure(info)


class _NoHostScreenshots:
    """A provider that takes no screenshot itself (the env then asks the in-VM server) and keeps running."""

    name = "host"

    def screenshot(self):
        return None

    def is_running(self):
        return True


class _InputEnv(DesktopEnv):
    """A DesktopEnv over the host's in-VM server, reset to no task (no VM)."""

    def __init__(self, client, max_steps: int):
        self.controller, self.provider, self.max_steps = client, _NoHostScreenshots(), max_steps
        self.action_space_name, self.screen, self.action_timeout_s = "pyautogui", (1920, 1080), None
        self.require_a11y_tree = self.require_terminal = False
        self.task, self.instruction, self._evaluated = None, "", None
        self._reset_done, self._steps, self._actions, self._last_action = True, 0, [], None


def test_input_that_is_no_agent_step_uses_up_none_of_max_steps(client):
    env = _InputEnv(client, max_steps=2)
    for x in (10, 20, 30):  # more than max_steps: perform never truncates
        obs, info = env.perform(f"pyautogui.moveTo({x}, 10)")
        assert "error" not in info and not info["done"] and obs["screenshot"].ndim == 3
    assert env.step_count == 0
    _, info = env.perform("DONE")
    assert "only step() takes it" in info["error"] and env.step_count == 0
    _, _, terminated, truncated, info = env.step("pyautogui.moveTo(40, 10)")
    assert env.step_count == info["step"] == 1 and not (terminated or truncated)
    _, info = env.perform("pyautogui.moveTo(50, 10)")
    assert info["step"] == 1
    _, reward, terminated, truncated, info = env.step("pyautogui.moveTo(60, 10)")
    assert env.step_count == 2 and truncated and not terminated and info["done"] and reward == 0.0
