"""Native computer-use agents and the MCP server end to end on a real VM (base image): a local server stands in
for each model API and replays the smoke suite's gui terminal task in that API's own action format; run.py scores
1.0 with each. The same task through the MCP server with the SDK's own client (start, act, evaluate) scores 1.0."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/agents"))
from fake_api import FakeModelAPI  # noqa: E402

GUI_TASK = "8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62"  # os: in the open terminal, mkdir -p ~/projects/demo
COMMAND = "mkdir -p ~/projects/demo"


def anthropic_use(i, action, **fields):
    return {"content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "computer",
                         "input": {"action": action, **fields}}], "stop_reason": "tool_use"}


def openai_call(i, action):
    return {"output": [{"type": "computer_call", "id": f"cu_{i}", "call_id": f"call_{i}", "status": "completed",
                        "pending_safety_checks": [], "action": action}]}


def qwen(arguments):
    return f'<tool_call>{json.dumps({"name": "computer_use", "arguments": arguments})}</tool_call>'


SCRIPTS = {
    "computer-use": ("claude-stand-in", "anthropic_url", [
        anthropic_use(1, "type", text=COMMAND), anthropic_use(2, "key", text="Return"),
        anthropic_use(3, "wait", duration=2), {"content": [{"type": "text", "text": "Created.\nDONE"}],
                                               "stop_reason": "end_turn"}]),
    "openai-computer-use": ("computer-use-preview", "openai_url", [
        openai_call(1, {"type": "type", "text": COMMAND}), openai_call(2, {"type": "keypress", "keys": ["ENTER"]}),
        openai_call(3, {"type": "wait"}),
        {"output": [{"type": "message", "id": "m", "role": "assistant", "status": "completed",
                     "content": [{"type": "output_text", "text": "DONE", "annotations": []}]}]}]),
    "ui-tars": ("ui-tars-stand-in", "openai_url", [
        f"Thought: type it\nAction: type(content='{COMMAND}')", "Thought: run it\nAction: hotkey(key='enter')",
        "Action: wait()", "Thought: done\nAction: finished(content='created')"]),
    "qwen-vl": ("qwen-stand-in", "openai_url", [
        qwen({"action": "type", "text": COMMAND}), qwen({"action": "key", "keys": ["Return"]}),
        qwen({"action": "wait", "time": 2}), qwen({"action": "terminate", "status": "success"})]),
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    base = tmp_path_factory.mktemp("suite") / "evaluation_examples"
    folder = base / "examples" / "os" / GUI_TASK
    folder.mkdir(parents=True)
    src = ROOT / "evaluation_examples/examples/os" / GUI_TASK / f"{GUI_TASK}.json"
    (folder / f"{GUI_TASK}.json").write_text(src.read_text())
    index = base / "test_one.json"
    index.write_text(json.dumps({"os": [GUI_TASK]}))
    return index


@pytest.mark.parametrize("kind", list(SCRIPTS))
def test_a_stand_in_api_in_its_own_format_solves_the_gui_task(base_image, suite, tmp_path, kind, monkeypatch):
    model, url_of, script = SCRIPTS[kind]
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with FakeModelAPI(script) as api:
        proc = subprocess.run([sys.executable, "run.py", "--model", model, "--agent", kind,
                               "--base_url", getattr(api, url_of), "--path_to_vm", base_image.name,
                               "--result_dir", str(tmp_path), "--test_all_meta_path", str(suite),
                               "--test_config_base_dir", str(suite.parent), "--max_steps", "8"],
                              cwd=ROOT, capture_output=True, text=True, timeout=1200)
    folder = next(tmp_path.glob(f"pyautogui/screenshot/{model}/os/{GUI_TASK}"))
    status = json.loads((folder / "status.json").read_text())
    assert status["score"] == 1.0, (status, proc.stdout[-2000:], proc.stderr[-2000:])
    assert len(api.requests) == len(script)  # every scripted turn was asked for, none more


def test_the_mcp_server_over_stdio_starts_acts_and_scores(base_image, suite):
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["-m", "desktop_env", "mcp", "--suite", str(suite),
                                         "--path_to_vm", base_image.name, "--max_envs", "1"])

    async def main():
        async with Client(params, read_timeout_seconds=1200) as client:
            started = await client.call_tool("start_task", {"task_id": GUI_TASK})
            assert not started.is_error and "projects/demo" in started.content[0].text
            for args in ({"action": "type", "text": COMMAND}, {"action": "key", "text": "Return"},
                         {"action": "wait", "duration": 2}):
                shot = await client.call_tool("computer", args)
                assert not shot.is_error and shot.content[0].type == "image", shot
            scored = await client.call_tool("evaluate", {})
            return json.loads(scored.content[0].text)
    assert anyio.run(main)["score"] == 1.0
