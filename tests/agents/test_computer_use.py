"""Anthropic computer use through the real anthropic SDK against a local server speaking the Messages wire format:
what the client sends (tool, beta, images, tool_result pairing) and how each tool_use becomes an env action."""
import base64
import io
from pathlib import Path

import numpy as np
import pytest
from fake_api import FakeModelAPI
from PIL import Image

from desktop_env.actions import parse_action
from desktop_env.agents import create_agent
from desktop_env.agents.computer_use import OMITTED, ComputerUseAgent, InvalidToolUse, xdotool_keys

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def obs():
    shot = np.asarray(Image.open(DATA / "desktop.png").convert("RGB"))
    assert shot.shape == (1080, 1920, 3)
    return {"screenshot": shot, "accessibility_tree": "", "error": ""}


def use(i, action, **fields):
    return {"type": "tool_use", "id": f"toolu_{i}", "name": "computer", "input": {"action": action, **fields}}


def reply(*blocks, stop="tool_use"):
    return {"content": list(blocks), "stop_reason": stop}


def agent_for(api, **kw):
    kw.setdefault("api_backoff_s", 0.01)
    agent = create_agent("claude-test", agent="computer-use", base_url=api.anthropic_url, **kw)
    agent.reset(None)
    return agent


def images(blocks):
    out = []
    for b in blocks:
        for part in (b["content"] if b.get("type") == "tool_result" else [b]):
            if part.get("type") == "image":
                out.append(Image.open(io.BytesIO(base64.b64decode(part["source"]["data"]))))
    return out


def test_a_multi_action_episode_sends_the_tool_and_pairs_every_tool_use_with_its_result(obs, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    script = [reply({"type": "text", "text": "I open the menu."}, use(1, "left_click", coordinate=[640, 360])),
              reply(use(2, "type", text="hello world"), use(3, "key", text="ctrl+s")),
              reply({"type": "text", "text": "The file is saved.\nDONE"}, stop="end_turn")]
    with FakeModelAPI(script) as api:
        agent = agent_for(api)
        assert isinstance(agent, ComputerUseAgent)
        text, actions = agent.predict("Write hello world and save", obs)
        assert text == "I open the menu."
        assert actions == ["pyautogui.click(960, 540, clicks=1, interval=0.1, button='left')"]
        assert agent.screen_mapping.to_json() == {"model": [1280, 720], "screen": [1920, 1080]}
        _, actions = agent.predict("Write hello world and save", obs)
        assert actions == ["pyautogui.write('hello world')", "pyautogui.hotkey('ctrl', 's')"]
        text, actions = agent.predict("Write hello world and save", obs)
        assert actions == ["DONE"] and text.endswith("DONE")
    first = api.requests[0]
    assert api.paths[0].startswith("/v1/messages")
    assert "computer-use-2025-11-24" in api.headers[0]["anthropic-beta"]
    assert first["tools"] == [{"type": "computer_20251124", "name": "computer", "display_width_px": 1280,
                               "display_height_px": 720, "enable_zoom": True}]
    assert "DONE" in first["system"] and "FAIL" in first["system"]
    assert first["messages"][0]["content"][0] == {"type": "text", "text": "Write hello world and save"}
    assert [im.size for im in images(first["messages"][0]["content"])] == [(1280, 720)]
    second = api.requests[1]["messages"]
    assert second[1]["role"] == "assistant" and second[1]["content"][1]["id"] == "toolu_1"
    result = second[2]["content"]
    assert [b["tool_use_id"] for b in result] == ["toolu_1"] and [im.size for im in images(result)] == [(1280, 720)]
    third = api.requests[2]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in third] == ["toolu_2", "toolu_3"]
    assert third[0]["content"] == [{"type": "text", "text": "done"}] and len(images(third[1:])) == 1
    for action in ["pyautogui.click(960, 540, clicks=1, interval=0.1, button='left')", "pyautogui.hotkey('ctrl', 's')"]:
        parse_action(action, "pyautogui", (1920, 1080))  # runnable by env.step


def test_an_invalid_action_is_answered_with_an_error_result_and_counts_as_a_turn(obs):
    script = [reply(use(1, "left_click", coordinate=[5000, 10])), reply(use(2, "fly")),
              reply({"type": "text", "text": "I give up.\nFAIL"}, stop="end_turn")]
    with FakeModelAPI(script) as api:
        agent = agent_for(api)
        _, actions = agent.predict("Click", obs)
        assert actions == [] and "off the 1280x720 screen" in agent.last_turn.parse_error
        _, actions = agent.predict("Click", obs)
        assert actions == [] and "unknown action 'fly'" in agent.last_turn.parse_error
        _, actions = agent.predict("Click", obs)
        assert actions == ["FAIL"]
    result = api.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and result["tool_use_id"] == "toolu_1"
    assert "off the 1280x720 screen" in result["content"][0]["text"]


def test_a_refusal_ends_the_episode_with_fail_and_an_answer_without_a_final_line_is_nudged(obs):
    with FakeModelAPI([reply({"type": "text", "text": "I cannot help with that."}, stop="refusal")]) as api:
        assert agent_for(api).predict("Do it", obs)[1] == ["FAIL"]
    script = [reply({"type": "text", "text": "Let me think."}, stop="end_turn"), reply(use(1, "screenshot"))]
    with FakeModelAPI(script) as api:
        agent = agent_for(api)
        assert agent.predict("Do it", obs)[1] == [] and "DONE or FAIL" in agent.last_turn.parse_error
        assert agent.predict("Do it", obs)[1] == [{"action_type": "WAIT", "seconds": 0}]
    assert "DONE or FAIL" in api.requests[1]["messages"][-1]["content"][0]["text"]


def test_a_rate_limit_is_retried(obs):
    with FakeModelAPI([{"status": 429}, reply(use(1, "mouse_move", coordinate=[100, 100]))]) as api:
        agent = agent_for(api, temperature=0.3, max_tokens=500)  # as run.py passes them
        assert agent.predict("Move", obs)[1] == ["pyautogui.moveTo(150, 150)"]
    assert len(api.requests) == 2
    assert api.requests[1]["temperature"] == 0.3 and api.requests[1]["max_tokens"] == 500


def test_older_screenshots_are_replaced_by_text_and_zoom_returns_the_region(obs):
    script = [reply(use(1, "screenshot")), reply(use(2, "screenshot")),
              reply(use(3, "zoom", region=[0, 0, 640, 360])), reply({"type": "text", "text": "DONE"}, stop="end_turn")]
    with FakeModelAPI(script) as api:
        agent = agent_for(api, max_trajectory_length=2)
        for _ in range(4):
            agent.predict("Look", obs)
    last = api.requests[3]["messages"]
    kept = [im.size for m in last if m["role"] == "user" for im in images(m["content"])]
    assert kept == [(1280, 720), (960, 540)]  # the zoom's region at the screen's own pixels is the newest
    assert OMITTED in str(last[0]["content"]) and OMITTED in str(last[2]["content"])
    uses = [b["id"] for m in last if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in last if m["role"] == "user" for b in m["content"] if b["type"] == "tool_result"]
    assert uses == results == ["toolu_1", "toolu_2", "toolu_3"]
    assert OMITTED not in str(last[-1]["content"])


def test_the_older_tool_version_has_no_zoom_and_its_own_beta(obs):
    with FakeModelAPI([reply(use(1, "zoom", region=[0, 0, 10, 10]))]) as api:
        agent = agent_for(api, tool_version="computer_20250124")
        assert agent.predict("Zoom", obs)[1] == [] and "unknown action 'zoom'" in agent.last_turn.parse_error
    assert "computer-use-2025-01-24" in api.headers[0]["anthropic-beta"]
    assert api.requests[0]["tools"][0]["type"] == "computer_20250124" and "enable_zoom" not in api.requests[0]["tools"][0]


def test_mouse_and_keyboard_actions_become_runnable_pyautogui_code(obs):
    from desktop_env.agents.computer_use import ToolTranslator
    from desktop_env.agents.parsing import ScreenMapping

    t = ToolTranslator(ScreenMapping((1280, 720), (1920, 1080)))
    cases = {
        "right_click": ({"coordinate": [10, 20]}, "pyautogui.click(15, 30, clicks=1, interval=0.1, button='right')"),
        "triple_click": ({"coordinate": [10, 20]}, "pyautogui.click(15, 30, clicks=3, interval=0.1, button='left')"),
        "left_click_drag": ({"start_coordinate": [0, 0], "coordinate": [100, 100]},
                            "pyautogui.moveTo(0, 0)\npyautogui.dragTo(150, 150, duration=0.5, button='left')"),
        "scroll": ({"coordinate": [100, 100], "scroll_direction": "down", "scroll_amount": 5},
                   "pyautogui.moveTo(150, 150)\npyautogui.scroll(-5)"),
        "left_mouse_down": ({}, "pyautogui.mouseDown(button='left')"),
        "wait": ({"duration": 2}, {"action_type": "WAIT", "seconds": 2.0}),
    }
    for action, (fields, expected) in cases.items():
        got = t.action({"action": action, **fields})
        assert got == expected, action
        parse_action(got, "pyautogui", (1920, 1080))
    shift_click = t.action({"action": "left_click", "coordinate": [10, 20], "text": "shift"})
    assert shift_click.splitlines()[0] == "pyautogui.keyDown('shift')" and shift_click.endswith("keyUp('shift')")
    held = t.action({"action": "hold_key", "text": "ctrl", "duration": 0.5})
    assert "pyautogui.keyDown('ctrl')" in held and "time.sleep(0.5)" in held
    assert xdotool_keys("ctrl+shift+t Return super F5 Page_Down") == [["ctrl", "shift", "t"], ["enter"], ["win"],
                                                                      ["f5"], ["pagedown"]]
    with pytest.raises(InvalidToolUse, match="unknown key 'Hyperdrive'"):
        xdotool_keys("ctrl+Hyperdrive")
    with pytest.raises(InvalidToolUse, match="scroll_direction"):
        t.action({"action": "scroll", "scroll_direction": "sideways"})


def test_the_computer_use_agent_needs_a_key_or_a_base_url(monkeypatch):
    from desktop_env.agents.llm import ModelAPIError

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelAPIError, match="ANTHROPIC_API_KEY"):
        create_agent("claude-test", agent="computer-use")
