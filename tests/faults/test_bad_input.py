"""Bad input at the env level: broken task files, wrong actions, huge and non-ASCII typing, unreadable guest files.

Task-file validation itself is covered by tests/tasks/test_task_loading.py and action
parsing by tests/test_actions.py; here each bad input goes through a live env, which
must report it clearly and stay usable.
"""
import json
import logging
import time

import pytest

from desktop_env.actions import MAX_TYPING_CHARS
from desktop_env.errors import TaskConfigError
from faultutil import DATA, QUICK_TASK, terminal_reading_into

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ENV_KWARGS = {"action_space": "computer_13", "max_steps": 50}


def _works(env) -> None:
    _, _, terminated, _, info = env.step({"action_type": "MOVE_TO", "x": 10, "y": 10})
    assert "error" not in info and not terminated, info
    assert env.controller.execute(["echo", "ok"])["output"].strip() == "ok"


def _task() -> dict:
    return json.loads((DATA / "examples" / "faults" / QUICK_TASK / f"{QUICK_TASK}.json").read_text())


def test_broken_task_configs_at_reset(env, tmp_path):
    truncated = tmp_path / "truncated.json"
    truncated.write_text(json.dumps(_task())[:200])
    with pytest.raises(TaskConfigError) as err:
        env.reset(options={"task_config": str(truncated)})
    assert str(truncated) in str(err.value)
    with pytest.raises(TaskConfigError) as err:
        env.reset(options={"task_config": str(tmp_path / "missing.json")})
    assert "missing.json" in str(err.value)
    unknown = _task()
    unknown["evaluator"]["func"] = "check_include_exlude"
    with pytest.raises(TaskConfigError) as err:
        env.reset(options={"task_config": unknown})
    assert err.value.field and "evaluator" in err.value.field and "check_include_exclude" in str(err.value)
    wrong_type = _task()
    wrong_type["config"] = {"type": "execute"}
    with pytest.raises(TaskConfigError) as err:
        env.reset(options={"task_config": wrong_type})
    assert err.value.field and "config" in err.value.field
    with pytest.raises(TaskConfigError):
        env.reset(options={"task_config": 42})
    # The env is still usable, and a good task runs.
    obs, info = env.reset(options={"task_config": _task()})
    assert info["task_id"] == QUICK_TASK and obs["instruction"]
    _works(env)


@pytest.mark.parametrize("action, message", [
    ({"action_type": "CLICK", "x": "ten", "y": 5}, "must be a number"),
    ({"action_type": "CLICK", "x": 99999, "y": 5}, "off screen"),
    ({"action_type": "PRESS", "key": "enterr"}, "unknown key"),
    ({"action_type": "TYPING"}, "text"),
    ({"action": "CLICK"}, "action_type"),
    ("pyautogui.click(", "dicts"),
    (["CLICK"], "dicts"),
])
def test_wrong_computer_13_actions_are_reported(env, action, message):
    obs, reward, terminated, truncated, info = env.step(action)
    assert message in info["error"] and info["error"] == obs["error"], info
    assert not terminated and reward == 0.0
    _works(env)


def test_huge_and_non_ascii_typing(env):
    too_long = "x" * (MAX_TYPING_CHARS + 1)
    _, _, _, _, info = env.step({"action_type": "TYPING", "text": too_long})
    assert f"at most {MAX_TYPING_CHARS}" in info["error"]
    # A line mixing ASCII and non-ASCII is typed exactly.
    text = ("Grüße, naïve café ✓ 日本語 ½ € ß Ωμέγα; plain ascii 0123456789 - " * 5)[:300]
    terminal_reading_into(env, "/tmp/typed.txt", "typing-target")
    for action in ({"action_type": "TYPING", "text": text}, {"action_type": "PRESS", "key": "enter"},
                   {"action_type": "HOTKEY", "keys": ["ctrl", "d"]}):
        _, _, _, _, info = env.step(action)
        assert "error" not in info, (action if len(str(action)) < 200 else action["action_type"], info)
    deadline = time.monotonic() + 60
    while True:
        typed = env.controller.execute(["cat", "/tmp/typed.txt"])["output"]
        if typed == text + "\n" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert typed == text + "\n", f"typed {len(typed)} chars; first difference at " \
        f"{next((i for i, (a, b) in enumerate(zip(typed, text)) if a != b), min(len(typed), len(text)))}"
    _works(env)


def test_unreadable_guest_file_is_scored_as_missing(env, caplog):
    from desktop_env.registry import GETTERS

    get_vm_file = GETTERS["vm_file"]
    with caplog.at_level(logging.INFO, logger="desktop_env"):
        assert get_vm_file(env._context(), "/etc/shadow", "shadow") is None
        assert get_vm_file(env._context(), "/root/.bashrc", "bashrc") is None
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "/etc/shadow" in messages and "/root/.bashrc" in messages and "could not be fetched" in messages
    assert get_vm_file(env._context(), "/etc/hostname", "hostname") is not None
    _works(env)
