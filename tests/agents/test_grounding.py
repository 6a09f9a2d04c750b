"""Grounding models in their own grammars (UI-TARS, Qwen-VL) through the openai SDK against a local chat server:
the screenshot is sent at a size of multiples of 28 and each answer's coordinates map back onto the screen."""
import base64
import io
from pathlib import Path

import numpy as np
import pytest
from fake_api import FakeModelAPI
from PIL import Image

from desktop_env.actions import parse_action
from desktop_env.agents import create_agent
from desktop_env.agents.grounding import qwen_actions, smart_resize, ui_tars_actions
from desktop_env.agents.parsing import ParseError, ScreenMapping

DATA = Path(__file__).parent / "data"


def obs_of(size=None):
    image = Image.open(DATA / "desktop.png").convert("RGB")
    if size:
        image = image.resize(size)
    return {"screenshot": np.asarray(image), "accessibility_tree": "", "error": ""}


def sent_image(body):
    url = next(p["image_url"]["url"] for p in body["messages"][-1]["content"] if p["type"] == "image_url")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def agent_for(api, kind, **kw):
    agent = create_agent("grounder", agent=kind, base_url=api.openai_url, api_backoff_s=0.01, **kw)
    agent.reset(None)
    return agent


def test_smart_resize_gives_multiples_of_28_close_to_the_size():
    assert smart_resize(1280, 720) == (1288, 728)
    assert smart_resize(1000, 700) == (1008, 700)
    w, h = smart_resize(5000, 5000)
    assert w % 28 == 0 and h % 28 == 0 and w * h <= 16384 * 28 * 28


def test_ui_tars_on_the_grid_and_in_pixels(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    script = ["Thought: I click the centre.\nAction: click(start_box='(500,500)')",
              "Thought: no action here", "Thought: done\nAction: finished(content='ok')"]
    with FakeModelAPI(script) as api:
        agent = agent_for(api, "ui-tars")
        obs = obs_of()
        assert agent.predict("Click", obs)[1] == ["pyautogui.click(960, 540, clicks=1, interval=0.1, button='left')"]
        assert agent.screen_mapping.to_json() == {"model": [1288, 728], "screen": [1920, 1080]}
        assert agent.predict("Click", obs)[1] == [] and "`Action:`" in agent.last_turn.parse_error
        assert agent.predict("Click", obs)[1] == ["DONE"]
    assert sent_image(api.requests[0]).size == (1288, 728)
    assert "0-1000 grid" in api.requests[0]["messages"][0]["content"]
    with FakeModelAPI(["Action: click(point='<point>644 364</point>')"]) as api:
        agent = agent_for(api, "ui-tars", coords="pixels")
        assert agent.predict("Click", obs_of())[1] == ["pyautogui.click(960, 540, clicks=1, interval=0.1, button='left')"]
    assert "pixels of the 1288x728 screenshot" in api.requests[0]["messages"][0]["content"]


def test_ui_tars_actions():
    m = ScreenMapping((1288, 728), (1920, 1080))
    text = ("Action: drag(start_box='<|box_start|>(0,0)<|box_end|>', end_box='(1000,1000)')\n"
            "hotkey(key='ctrl c')\ntype(content='hi\\n')\nscroll(start_box='(500,500)', direction='down')\n"
            "left_double(start_box='(100,100,200,200)')\nwait()\ncall_user()")
    actions = ui_tars_actions(text, m)
    assert actions[0] == "pyautogui.moveTo(0, 0)\npyautogui.dragTo(1919, 1079, duration=0.5, button='left')"
    assert actions[1:3] == ["pyautogui.hotkey('ctrl', 'c')", "pyautogui.write('hi\\n')"]
    assert actions[3] == "pyautogui.moveTo(960, 540)\npyautogui.scroll(-5)"
    assert actions[4] == "pyautogui.click(288, 162, clicks=2, interval=0.1, button='left')"
    assert actions[5] == {"action_type": "WAIT", "seconds": 5.0} and actions[6] == "FAIL"
    for a in actions[:5]:
        parse_action(a, "pyautogui", (1920, 1080))
    with pytest.raises(ParseError):
        ui_tars_actions("Action: click(start_box=", m)


def test_qwen_vl_on_a_screen_that_is_not_a_multiple_of_28():
    reply = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1007, 699]}}'
             '\n</tool_call>')
    with FakeModelAPI([reply, "I am stuck.", '<tool_call>{"name": "computer_use", "arguments": '
                                             '{"action": "terminate", "status": "failure"}}</tool_call>']) as api:
        agent = agent_for(api, "qwen-vl")
        obs = obs_of((1000, 700))
        assert agent.predict("Click", obs)[1] == ["pyautogui.click(999, 699, clicks=1, interval=0.1, button='left')"]
        assert agent.screen_mapping.to_json() == {"model": [1008, 700], "screen": [1000, 700]}
        assert agent.predict("Click", obs)[1] == [] and "<tool_call>" in agent.last_turn.parse_error
        assert agent.predict("Click", obs)[1] == ["FAIL"]
    assert sent_image(api.requests[0]).size == (1008, 700)
    assert "<tools>" in api.requests[0]["messages"][0]["content"]


def test_qwen_vl_actions():
    m = ScreenMapping((1288, 728), (1920, 1080))
    calls = [{"action": "key", "keys": ["ctrl", "s"]}, {"action": "type", "text": "x"},
             {"action": "scroll", "pixels": -300, "coordinate": [644, 364]}, {"action": "wait", "time": 1},
             {"action": "left_click_drag", "coordinate": [644, 364]}]
    text = "".join(f'<tool_call>{{"name": "computer_use", "arguments": {__import__("json").dumps(c)}}}</tool_call>'
                   for c in calls)
    assert qwen_actions(text, m) == ["pyautogui.hotkey('ctrl', 's')", "pyautogui.write('x')",
                                     "pyautogui.moveTo(960, 540)\npyautogui.scroll(-3)",
                                     {"action_type": "WAIT", "seconds": 1.0},
                                     "pyautogui.dragTo(960, 540, duration=0.5, button='left')"]
    with pytest.raises(Exception, match="off the 1288x728 screenshot"):
        qwen_actions('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", '
                     '"coordinate": [2000, 1]}}</tool_call>', m)


def test_a_rate_limit_is_retried_and_an_invalid_action_is_a_parse_error_turn():
    script = [{"status": 429}, "Action: click(start_box='(2000,10)')", "Action: wait()"]
    with FakeModelAPI(script) as api:
        agent = agent_for(api, "ui-tars")
        obs = obs_of()
        assert agent.predict("Click", obs)[1] == [] and "off the 0-1000 grid" in agent.last_turn.parse_error
        assert agent.predict("Click", obs)[1] == [{"action_type": "WAIT", "seconds": 5.0}]
    assert len(api.requests) == 3  # the 429 was asked again
