"""OpenAI computer use through the real openai SDK against a local server speaking the Responses API wire format:
what the client sends (tool, chaining, computer_call_output, acknowledged safety checks) and the actions it runs."""
from pathlib import Path

import numpy as np
import pytest
from fake_api import FakeModelAPI
from PIL import Image

from desktop_env.actions import parse_action
from desktop_env.agents import create_agent
from desktop_env.agents.computer_use import InvalidToolUse
from desktop_env.agents.openai_computer import OpenAIComputerAgent, openai_action
from desktop_env.agents.parsing import ScreenMapping

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def obs():
    shot = np.asarray(Image.open(DATA / "desktop.png").convert("RGB"))
    return {"screenshot": shot, "accessibility_tree": "", "error": ""}


def call(i, *actions, checks=()):
    item = {"type": "computer_call", "id": f"cu_{i}", "call_id": f"call_{i}", "status": "completed",
            "pending_safety_checks": [{"id": f"sc_{i}", "code": c, "message": f"{c} detected"} for c in checks]}
    if len(actions) == 1:
        item["action"] = actions[0]
    else:
        item["actions"] = list(actions)
    return {"output": [item]}


def message(text, kind="output_text"):
    part = {"type": kind, kind.split("_")[-1] if kind == "refusal" else "text": text}
    if kind == "output_text":
        part["annotations"] = []
    return {"output": [{"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": [part]}]}


def agent_for(api, **kw):
    kw.setdefault("api_backoff_s", 0.01)
    agent = create_agent("computer-use-preview", agent="openai-computer-use", base_url=api.openai_url, **kw)
    agent.reset(None)
    return agent


def test_an_episode_chains_responses_and_answers_each_call_with_a_screenshot(obs, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    script = [call(1, {"type": "click", "button": "left", "x": 640, "y": 360}, checks=["malicious_instructions"]),
              call(2, {"type": "type", "text": "hello"}, {"type": "keypress", "keys": ["CTRL", "S"]}),
              message("Saved.\nDONE")]
    with FakeModelAPI(script) as api:
        agent = agent_for(api)
        assert isinstance(agent, OpenAIComputerAgent)
        text, actions = agent.predict("Type hello and save", obs)
        assert actions == ["pyautogui.click(960, 540, clicks=1, interval=0.1, button='left')"]
        assert "[safety check acknowledged: malicious_instructions: malicious_instructions detected]" in text
        _, actions = agent.predict("Type hello and save", obs)
        assert actions == ["pyautogui.write('hello')", "pyautogui.hotkey('ctrl', 's')"]
        assert agent.predict("Type hello and save", obs)[1] == ["DONE"]
    first, second, third = api.requests
    assert api.paths[0] == "/v1/responses"
    assert first["tools"] == [{"type": "computer_use_preview", "display_width": 1280, "display_height": 720,
                               "environment": "linux"}]
    assert first["truncation"] == "auto" and "previous_response_id" not in first
    assert first["input"][0]["content"][0] == {"type": "input_text", "text": "Type hello and save"}
    assert first["input"][0]["content"][1]["image_url"].startswith("data:image/png;base64,")
    assert second["previous_response_id"] == "resp_1" and third["previous_response_id"] == "resp_2"
    output = second["input"][0]
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_1"
    assert output["output"]["type"] == "computer_screenshot" and output["output"]["image_url"].startswith("data:")
    assert output["acknowledged_safety_checks"] == [{"id": "sc_1", "code": "malicious_instructions",
                                                     "message": "malicious_instructions detected"}]
    assert third["input"][0]["call_id"] == "call_2" and "acknowledged_safety_checks" not in third["input"][0]


def test_an_invalid_action_is_reported_in_the_next_input_and_a_refusal_fails(obs):
    script = [call(1, {"type": "click", "button": "left", "x": 4000, "y": 10}), message("I won't.", "refusal")]
    with FakeModelAPI(script) as api:
        agent = agent_for(api)
        assert agent.predict("Click", obs)[1] == [] and "not on the 1280x720 screenshot" in agent.last_turn.parse_error
        assert agent.predict("Click", obs)[1] == ["FAIL"]
    sent = api.requests[1]["input"]
    assert sent[0]["type"] == "computer_call_output" and "did not run" in sent[1]["content"]


def test_a_rate_limit_is_retried_and_the_ga_tool_is_sent(obs):
    with FakeModelAPI([{"status": 429}, call(1, {"type": "wait"})]) as api:
        agent = agent_for(api, tool_version="computer", temperature=0.3, max_tokens=500)  # as run.py passes them
        assert agent.predict("Wait", obs)[1] == [{"action_type": "WAIT", "seconds": 2.0}]
    assert len(api.requests) == 2 and api.requests[1]["tools"] == [{"type": "computer"}]
    assert api.requests[1]["temperature"] == 0.3 and api.requests[1]["max_output_tokens"] == 500


def test_actions_map_from_the_screenshot_to_the_screen():
    m = ScreenMapping((1280, 720), (1920, 1080))
    cases = [({"type": "double_click", "x": 10, "y": 20}, "pyautogui.click(15, 30, clicks=2, interval=0.1, button='left')"),
             ({"type": "click", "button": "wheel", "x": 10, "y": 20}, "pyautogui.click(15, 30, clicks=1, interval=0.1, button='middle')"),
             ({"type": "scroll", "x": 100, "y": 100, "scroll_x": 0, "scroll_y": 200}, "pyautogui.moveTo(150, 150)\npyautogui.scroll(-3)"),
             ({"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 100, "y": 100}]},
              "pyautogui.moveTo(0, 0)\npyautogui.mouseDown(button='left')\npyautogui.moveTo(150, 150, duration=0.2)\n"
              "pyautogui.mouseUp(button='left')"),
             ({"type": "move", "x": 10, "y": 20, "keys": ["SHIFT"]},
              "pyautogui.keyDown('shift')\npyautogui.moveTo(15, 30)\npyautogui.keyUp('shift')"),
             ({"type": "keypress", "keys": ["ArrowLeft"]}, "pyautogui.hotkey('left')")]
    for action, expected in cases:
        assert openai_action(action, m) == expected
        parse_action(expected, "pyautogui", (1920, 1080))
    with pytest.raises(InvalidToolUse, match="unknown action type 'teleport'"):
        openai_action({"type": "teleport"}, m)
    with pytest.raises(InvalidToolUse, match="unknown key 'HYPER'"):
        openai_action({"type": "keypress", "keys": ["HYPER"]}, m)
