"""The MCP server's plumbing without a VM, through the SDK's own client: tasks without their solutions, actions
turned into env steps, errors as tool errors, environments per session (closed when the HTTP session ends), the
bearer token. The environment here is a recording double; tests/vm/test_mcp_vm.py drives a real VM."""
from __future__ import annotations

import io
import socket
import threading
import time
from pathlib import Path

import anyio
import pytest
from PIL import Image

from desktop_env.mcp_server import BearerAuth, Desktops, build_server

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "evaluation_examples" / "test_smoke.json"
TASK = "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11"  # os: hello.txt on the Desktop


class RecordingEnv:
    """Answers like DesktopEnv and records what it was asked."""

    def __init__(self):
        self.screen = (1920, 1080)
        self.instruction, self.steps, self.closed, self.snapshots = "", [], False, ["init_state"]
        self.provider = self
        self.controller = self

    def reset(self, options):
        from desktop_env.tasks import load_task

        self.instruction = load_task(options["task_config"]).instruction

    def step(self, action):
        self.steps.append(action)
        return {}, 0.0, False, False, {"error": "boom"} if action == "pyautogui.write('fail')" else {}

    def screenshot_png(self):
        buf = io.BytesIO()
        Image.new("RGB", self.screen, "navy").save(buf, format="PNG")
        return buf.getvalue()

    def evaluate(self):
        return 1.0 if "pyautogui.write('hello world')" in self.steps else 0.0

    def cursor_position(self):
        return 12, 34

    def accessibility_tree(self):
        return "<desktop-frame/>"

    def list_snapshots(self):
        return list(self.snapshots)

    def save_snapshot(self, name):
        self.snapshots.append(name)

    def revert_to_snapshot(self, name):
        self.steps.append(f"revert {name}")

    def close(self):
        self.closed = True


@pytest.fixture
def desktops():
    made = []

    def make():
        made.append(RecordingEnv())
        return made[-1]

    d = Desktops(SUITE, max_envs=2, make_env=make)
    d.made = made
    return d


def call(server, steps):
    from mcp import Client

    async def main():
        async with Client(server, read_timeout_seconds=60) as client:
            return [await step(client) for step in steps]
    return anyio.run(main)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


def test_tasks_show_id_and_instruction_only_and_a_task_scores(desktops):
    server = build_server(desktops)
    listed, started, clicked, typed, bad, where, scored, again = call(server, [
        lambda c: c.call_tool("list_tasks", {"domain": "os"}),
        lambda c: c.call_tool("start_task", {"task_id": TASK}),
        lambda c: c.call_tool("computer", {"action": "left_click", "coordinate": [100, 200]}),
        lambda c: c.call_tool("computer", {"action": "type", "text": "hello world"}),
        lambda c: c.call_tool("computer", {"action": "left_click", "coordinate": [5000, 1]}),
        lambda c: c.call_tool("computer", {"action": "cursor_position"}),
        lambda c: c.call_tool("evaluate", {}),
        lambda c: c.call_tool("evaluate", {}),
    ])
    body = text_of(listed)
    assert TASK in body and "hello.txt" in body
    assert "printf" not in body and "solution" not in body and "check_include_exclude" not in body
    assert "Create a text file" in text_of(started) and "printf" not in text_of(started)
    assert clicked.content[0].type == "image" and not clicked.is_error
    env = desktops.made[0]
    assert env.steps[:2] == ["pyautogui.click(100, 200, clicks=1, interval=0.1, button='left')",
                             "pyautogui.write('hello world')"]
    assert bad.is_error and "off the 1920x1080 screen" in text_of(bad) and len(env.steps) == 2
    assert text_of(where) == "X=12,Y=34"
    assert '"score": 1.0' in text_of(scored) or "1.0" in text_of(scored)
    assert again.is_error and "start_task first" in text_of(again)


def test_without_evaluate_there_is_no_score_and_envs_are_bounded(desktops):
    server = build_server(desktops, evaluate=False)
    tools, a, b, c, missing = call(server, [
        lambda c: c.list_tools(),
        lambda c: c.call_tool("start_task", {"task_id": TASK, "env": "a"}),
        lambda c: c.call_tool("start_task", {"task_id": TASK, "env": "b"}),
        lambda c: c.call_tool("start_task", {"task_id": TASK, "env": "c"}),
        lambda c: c.call_tool("start_task", {"task_id": "no-such-task", "env": "a"}),
    ])
    names = {t.name for t in tools.tools}
    assert "evaluate" not in names and {"start_task", "computer", "screenshot", "revert"} <= names
    assert not a.is_error and not b.is_error
    assert c.is_error and "at most 2 environments" in text_of(c)
    assert missing.is_error and "no task 'no-such-task'" in text_of(missing)


def test_snapshots_revert_by_name(desktops):
    server = build_server(desktops)
    _, saved, listed, reverted, unknown = call(server, [
        lambda c: c.call_tool("start_task", {"task_id": TASK}),
        lambda c: c.call_tool("save_snapshot", {"name": "mine"}),
        lambda c: c.call_tool("list_snapshots", {}),
        lambda c: c.call_tool("revert", {"snapshot": "mine"}),
        lambda c: c.call_tool("revert", {"snapshot": "nope"}),
    ])
    assert "mine" in text_of(listed) and reverted.content[0].type == "image"
    assert desktops.made[0].steps == ["revert mine"]
    assert unknown.is_error and "no snapshot 'nope'" in text_of(unknown)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_needs_the_token_and_a_closed_session_stops_its_vms(desktops):
    import httpx2
    import uvicorn
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    app = BearerAuth(build_server(desktops).streamable_http_app(host="127.0.0.1"), "s3cret", desktops.close_owner)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        assert httpx2.post(url, json={}).status_code == 401
        assert httpx2.post(url, json={}, headers={"Authorization": "Bearer wrong"}).status_code == 401

        async def session():
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=60) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode="legacy") as client:
                    started = await client.call_tool("start_task", {"task_id": TASK})
                    assert not started.is_error, text_of(started)
                    assert desktops.desktops and not desktops.made[0].closed
        anyio.run(session)
        deadline = time.monotonic() + 10
        while not desktops.made[0].closed:
            assert time.monotonic() < deadline, "the session ended but its VM was not stopped"
            time.sleep(0.05)
        assert not desktops.desktops
    finally:
        server.should_exit = True
        thread.join(10)
