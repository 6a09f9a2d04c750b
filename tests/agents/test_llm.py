"""Model agents through the real openai/anthropic SDKs against a local server speaking each API's wire format."""
import base64
import io
from pathlib import Path

import numpy as np
import pytest
from fake_api import FakeModelAPI
from PIL import Image

from desktop_env.agents import create_agent
from desktop_env.agents.a11y import CHARS_PER_TOKEN
from desktop_env.agents.llm import LLMAgent, ModelAPIError

DATA = Path(__file__).parent / "data"
CLICK = "I click the terminal.\n```python\npyautogui.click(640, 360)\n```"


@pytest.fixture(scope="module")
def obs():
    shot = np.asarray(Image.open(DATA / "desktop.png").convert("RGB"))
    assert shot.shape == (1080, 1920, 3)
    return {"screenshot": shot, "accessibility_tree": (DATA / "desktop_a11y.xml").read_text(), "error": ""}


def agent_for(api, model="gpt-test", **kw):
    url = api.anthropic_url if model.startswith("claude") else api.openai_url
    kw.setdefault("api_backoff_s", 0.01)
    return create_agent(model, base_url=url, **kw)


def openai_images(body):
    parts = body["messages"][-1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    return [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls]


def test_openai_request_carries_downscaled_image_and_trimmed_tree(obs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI([CLICK]) as api:
        agent = agent_for(api, observation_type="screenshot_a11y_tree", a11y_tree_max_tokens=120,
                          temperature=0.5, max_tokens=77)
        assert isinstance(agent, LLMAgent)
        agent.reset(None)
        response, actions = agent.predict("Open a terminal", obs)
    assert response == CLICK and actions == ["pyautogui.click(960, 540)"]
    assert agent.screen_mapping.to_json() == {"model": [1280, 720], "screen": [1920, 1080]}
    assert (agent.last_turn.tokens_in, agent.last_turn.tokens_out, agent.last_turn.parse_error) == (1234, 56, None)
    assert agent.last_turn.latency_s >= 0
    body = api.requests[0]
    assert api.paths == ["/v1/chat/completions"]
    assert body["model"] == "gpt-test" and body["max_tokens"] == 77 and body["temperature"] == 0.5
    assert "top_p" not in body
    assert body["messages"][0]["role"] == "system" and "pyautogui" in body["messages"][0]["content"]
    assert [im.size for im in openai_images(body)] == [(1280, 720)]
    text = next(p["text"] for p in body["messages"][-1]["content"] if p["type"] == "text")
    assert "Task: Open a terminal" in text
    tree = text.split("Accessibility tree:\n", 1)[1].split("\n\nWhat is the next action?")[0]
    lines = tree.splitlines()
    assert lines[0].startswith("tag\tname") and "more elements trimmed to fit 120 tokens" in lines[-1]
    assert len("\n".join(lines[:-1])) <= 120 * CHARS_PER_TOKEN
    assert "toggle-button\tApplications\t\t(0, 0)\t(68, 17)" in lines  # whole lines, positions in model space


def test_retries_on_500_and_429_then_succeeds(obs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI([{"status": 500}, {"status": 429}, "DONE"]) as api:
        agent = agent_for(api)
        agent.reset(None)
        assert agent.predict("x", obs) == ("DONE", ["DONE"])
    assert len(api.requests) == 3


def test_gives_up_after_bounded_attempts_and_refused_requests_are_not_retried(obs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI([{"status": 503}]) as api:
        agent = agent_for(api, api_attempts=3)
        agent.reset(None)
        with pytest.raises(ModelAPIError, match="gave up after 3 attempts") as err:
            agent.predict("x", obs)
    assert err.value.status == 503 and len(api.requests) == 3
    with FakeModelAPI([{"status": 400}]) as api:
        agent = agent_for(api)
        agent.reset(None)
        with pytest.raises(ModelAPIError) as err:
            agent.predict("x", obs)
    assert err.value.status == 400 and not err.value.retryable and len(api.requests) == 1


def test_malformed_reply_is_a_parse_failure_not_an_exception(obs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI(["Let me think about it... ```python\npyautogui.click(1,\n```", CLICK]) as api:
        agent = agent_for(api, max_trajectory_length=1)
        agent.reset(None)
        response, actions = agent.predict("x", obs)
        assert actions == [] and "not valid Python" in agent.last_turn.parse_error
        assert agent.last_turn.tokens_in == 1234
        _, actions = agent.predict("x", obs)
        assert actions == ["pyautogui.click(960, 540)"] and agent.last_turn.parse_error is None
        agent.predict("x", obs)
    # history: the second request carries the first turn; the third only the last one (max_trajectory_length=1)
    roles = [[m["role"] for m in body["messages"]] for body in api.requests]
    assert roles == [["system", "user"], ["system", "user", "assistant", "user"],
                     ["system", "user", "assistant", "user"]]
    assert api.requests[1]["messages"][2]["content"] == response
    assert api.requests[2]["messages"][2]["content"] == CLICK


def test_anthropic_messages_shape(obs, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test")
    reply = '```json\n{"action_type": "DOUBLE_CLICK", "x": 1279, "y": 0}\n```'
    with FakeModelAPI([{"status": 429}, reply]) as api:
        agent = agent_for(api, model="claude-test", action_space="computer_13", observation_type="screenshot",
                          top_p=0.9)
        agent.reset(None)
        _, actions = agent.predict("x", obs)
    assert actions == [{"action_type": "DOUBLE_CLICK", "x": 1918, "y": 0}]
    assert api.paths == ["/v1/messages", "/v1/messages"]
    body = api.requests[-1]
    assert body["model"] == "claude-test" and "computer_13" not in body["system"] and "action_type" in body["system"]
    assert body["top_p"] == 0.9 and body["temperature"] == 1.0
    image = body["messages"][-1]["content"][0]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))).size == (1280, 720)
    assert agent.last_turn.tokens_out == 56


def test_som_request_has_marked_image_and_table_and_tags_resolve(obs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI(["```python\npyautogui.click(tag_1)\n```"]) as api:
        agent = agent_for(api, observation_type="som")
        agent.reset(None)
        _, actions = agent.predict("x", obs)
    text = next(p["text"] for p in api.requests[0]["messages"][-1]["content"] if p["type"] == "text")
    assert "Marked elements:\nindex\ttag\tname\ttext\n1\ttoggle-button\tApplications" in text
    assert "tag_N" in api.requests[0]["messages"][0]["content"]
    marked = np.asarray(openai_images(api.requests[0])[0].convert("RGB"))
    assert (marked == [255, 0, 0]).all(axis=2).sum() > 500  # red boxes drawn
    # element 1 (Applications, 102x26 at 0,0 on the real screen): its centre, within rounding
    assert actions == ["pyautogui.click((51, 12))"]  # model-space centre (34, 8), scaled by 1.5


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ModelAPIError, match="environment variable MY_KEY"):
        create_agent("some-model", api_key_env="MY_KEY")


@pytest.mark.parametrize("status,kind", [(401, "refused"), (403, "refused"), (404, "refused"), (400, "rejected"),
                                         (413, "rejected"), (429, "transient"), (503, "transient")])
def test_a_failed_request_says_what_kind_of_failure_it_is(obs, monkeypatch, status, kind):
    """refused: the key, rights or model name (the run stops); rejected: this request's content or size (the
    agent's failure); transient: retried, then an infrastructure error."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI([{"status": status, "message": "prompt is too long: 250000 tokens > 200000 maximum"}]) as api:
        agent = agent_for(api, api_attempts=2)
        agent.reset(None)
        with pytest.raises(ModelAPIError) as err:
            agent.predict("x", obs)
    assert err.value.status == status and err.value.kind == kind
    assert len(api.requests) == (2 if kind == "transient" else 1)


def test_the_server_s_retry_after_is_read_and_honoured(obs, monkeypatch):
    from desktop_env.agents.llm import call_with_backoff, retry_after

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI([{"status": 429, "headers": {"Retry-After": "7"}}]) as api:
        agent = agent_for(api, api_attempts=1)
        agent.reset(None)
        with pytest.raises(ModelAPIError) as err:
            agent.predict("x", obs)
    assert err.value.retry_after_s == 7.0 and err.value.kind == "transient"
    waits = []
    calls = iter([err.value, err.value])

    def call():
        exc = next(calls, None)
        if exc is not None:
            raise exc
        return "answer"
    assert call_with_backoff(call, attempts=3, base_s=0.01, sleep=waits.append) == "answer"
    assert waits and all(w >= 7.0 for w in waits)  # the backoff alone would wait about 0.01-0.02 s
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0 and retry_after("soon") is None
