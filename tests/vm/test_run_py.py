"""run.py against real VMs on a two-task index: oracle, SIGTERM mid-run then resume, noop, and a model client
served by a local OpenAI-wire server that answers with a task's solution."""
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/agents"))
from fake_api import FakeModelAPI  # noqa: E402

CLI_TASK = "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11"   # os: cli, solved by a command
SLOW_TASK = "5e1f0c33-9d2a-4b8c-8f1e-6a7b2c3d4e55"  # a copy of it whose solution takes 20 s (time to interrupt)
GUI_TASK = "8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62"   # os: gui, a terminal to type into
STATUS_KEYS = ["task_id", "domain", "model", "trial", "action_space", "observation_type", "status", "final", "score",
               "reason", "steps", "duration_s", "attempts", "error", "started", "finished", "tags", "related_apps", "grader_corrections"]
TRAJ_KEYS = {"step_num", "timestamp", "action", "action_struct", "response", "parse_error", "tokens_in",
             "tokens_out", "latency_s", "reward", "done", "info", "screenshot_file", "screen_mapping"}


@pytest.fixture
def suite(tmp_path):
    """A two-task suite: the smoke suite's cli task and a slow copy of it; returns (index, suite folder)."""
    base = tmp_path / "suite" / "evaluation_examples"
    src = ROOT / "evaluation_examples/examples/os" / CLI_TASK / f"{CLI_TASK}.json"
    task = json.loads(src.read_text())
    slow = json.loads(src.read_text().replace("hello.txt", "slow.txt").replace("hello world", "slow world"))
    slow["id"] = SLOW_TASK
    slow["solution"] = [{"command": "sleep 20; " + slow["solution"][0]["command"], "shell": True}]
    for t in (task, slow):
        folder = base / "examples" / "os" / t["id"]
        folder.mkdir(parents=True)
        (folder / f"{t['id']}.json").write_text(json.dumps(t))
    index = base / "test_two.json"
    index.write_text(json.dumps({"os": [CLI_TASK, SLOW_TASK]}))
    return index, base


def run(result_dir, index, *extra, timeout=900):
    return subprocess.run([sys.executable, "run.py", "--result_dir", str(result_dir), "--test_all_meta_path",
                           str(index), "--test_config_base_dir", str(index.parent), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def status_of(folder: Path) -> dict:
    return json.loads((folder / "status.json").read_text())


def qemu_below(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.name().startswith("qemu-system")]
    except psutil.NoSuchProcess:
        return []


def test_sigterm_mid_run_then_resume_and_noop(base_image, suite, tmp_path):
    index, base = suite
    out_dir = tmp_path / "pyautogui" / "screenshot" / "oracle" / "os"
    proc = subprocess.Popen([sys.executable, "run.py", "--model", "oracle", "--path_to_vm", base_image.name,
                             "--result_dir", str(tmp_path), "--test_all_meta_path", str(index),
                             "--test_config_base_dir", str(base)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    ours: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 600
        while not any(line.startswith(f"started os/{SLOW_TASK}") for line in lines):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.2)
        time.sleep(3)  # into the slow solution
        while not ours:  # the VM serving the second task is this run's
            ours = qemu_below(proc.pid)
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        rc = proc.wait(timeout=60)
        stopped_s = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(5)
    log = "".join(lines)
    assert rc == 130, log
    assert stopped_s < 30, f"took {stopped_s:.0f} s to stop\n{log}"
    assert not [p for p in ours if p.is_running() and p.status() != psutil.STATUS_ZOMBIE], "QEMU left running"
    first = status_of(out_dir / CLI_TASK)
    assert list(first) == STATUS_KEYS and first["status"] == "success" and first["final"] is True
    assert first["score"] == 1.0 and (out_dir / CLI_TASK / "result.txt").read_text().strip() == "1.0"
    assert first["reason"]["kind"] == "passed", first["reason"]
    assert not (out_dir / SLOW_TASK / "result.txt").exists()
    interrupted = out_dir / SLOW_TASK / "status.json"
    assert not interrupted.exists() or status_of(out_dir / SLOW_TASK)["final"] is False

    rerun = run(tmp_path, index, "--model", "oracle", "--path_to_vm", base_image.name)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "2 tasks: 1 already done, 1 to run" in rerun.stdout
    assert f"started os/{CLI_TASK}" not in rerun.stdout and f"started os/{SLOW_TASK}" in rerun.stdout
    assert status_of(out_dir / CLI_TASK) == first  # untouched
    second = status_of(out_dir / SLOW_TASK)
    assert second["status"] == "success" and second["steps"] == 2 and second["tags"][0] == "cli"
    traj = [json.loads(line) for line in (out_dir / SLOW_TASK / "traj.jsonl").read_text().splitlines()]
    assert [t["action_struct"]["type"] for t in traj] == ["COMMAND", "DONE"] and set(traj[0]) == TRAJ_KEYS
    assert traj[0]["action_struct"]["text"].startswith("sleep 20; printf") and traj[-1]["done"] is True
    assert all((out_dir / SLOW_TASK / t["screenshot_file"]).exists() for t in traj)
    summary = json.loads((out_dir.parent / "summary.json").read_text())
    assert summary["overall"]["runs"] == 2 and summary["overall"]["mean_score"] == 1.0
    manifest = json.loads((out_dir.parent / "manifest.json").read_text())
    assert manifest["image"]["name"] == base_image.name and manifest["finished"]
    assert manifest["previous_runs"] and manifest["previous_runs"][-1]["interrupted"] is True

    done = run(tmp_path, index, "--model", "oracle", "--path_to_vm", base_image.name)
    assert done.returncode == 0 and "2 tasks: 2 already done, 0 to run" in done.stdout, done.stdout
    noop = run(tmp_path, index, "--model", "noop", "--path_to_vm", base_image.name)
    assert noop.returncode == 0, noop.stdout + noop.stderr
    noop_dir = tmp_path / "pyautogui" / "screenshot" / "noop" / "os"
    for task in (CLI_TASK, SLOW_TASK):
        status = status_of(noop_dir / task)
        assert (status["status"], status["score"], status["steps"]) == ("wrong_result", 0.0, 1)

    slow_only = index.parent / "test_slow.json"
    slow_only.write_text(json.dumps({"os": [SLOW_TASK]}))
    timed = run(tmp_path / "timeout", slow_only, "--model", "oracle", "--path_to_vm", base_image.name,
                "--task_timeout", "8")
    folder = tmp_path / "timeout" / "pyautogui" / "screenshot" / "oracle" / "os" / SLOW_TASK
    status = status_of(folder)
    assert (status["status"], status["final"], status["score"]) == ("timeout", True, 0.0), timed.stdout
    assert "exceeded --task_timeout 8 s" in status["error"] and (folder / "result.txt").read_text().strip() == "0.0"
    assert timed.returncode == 0


def test_sigterm_after_the_output_reader_died_still_stops_the_vms(base_image, suite, tmp_path):
    """Killing what reads run.py's output (a wrapper, a pipeline) and then run.py must not leave a worker
    running the rest of the queue: the interrupt message hits a broken pipe, and the VMs stop anyway."""
    index, base = suite
    proc = subprocess.Popen([sys.executable, "run.py", "--model", "oracle", "--path_to_vm", base_image.name,
                             "--result_dir", str(tmp_path), "--test_all_meta_path", str(index),
                             "--test_config_base_dir", str(base)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ours: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 600
        while not ours:
            ours = qemu_below(proc.pid)
            assert proc.poll() is None and time.monotonic() < deadline, "run.py exited before starting a VM"
            time.sleep(0.2)
        proc.stdout.close()  # the reader is gone: run.py's next write raises BrokenPipeError
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)  # it stops the VMs at once (unfixed: the worker ran on through the queue)
    finally:
        if proc.poll() is None:
            proc.kill()
            for p in ours:
                p.kill()
    assert rc != 0
    assert not [p for p in ours if p.is_running() and p.status() != psutil.STATUS_ZOMBIE], "QEMU left running"


def test_model_client_solves_a_task_through_the_openai_wire(base_image, tmp_path):
    index = tmp_path / "evaluation_examples" / "test_gui.json"
    index.parent.mkdir()
    (index.parent / "examples").symlink_to(ROOT / "evaluation_examples" / "examples")
    index.write_text(json.dumps({"os": [GUI_TASK]}))
    # Under a loaded host the guest's X server auto-repeats keys held across a slow key-up
    # ("proojects"); the scripted model turns auto-repeat off first, as its first block.
    replies = [
        "Let me type it. ```python\npyautogui.write('mkdir -p ~/projects/demo'\n```",  # malformed: a parse error
        "```python\nimport subprocess\nsubprocess.run(['xset', 'r', 'off'], check=False)\n```\nthen\n"
        "```python\npyautogui.write('mkdir -p ~/projects/demo', interval=0.02); pyautogui.press('enter')\n```",
        "Moving away.\n```python\npyautogui.moveTo(640, 360)\n```",
        "The folder exists now.\nDONE",
    ]
    with FakeModelAPI(replies) as api:
        out = run(tmp_path, index, "--model", "fake-vlm", "--base_url", api.openai_url, "--path_to_vm",
                  base_image.name, "--api_key_env", "NO_SUCH_KEY_VAR", "--max_steps", "8", "--retries", "0",
                  "--model_screen", "1280x720", "--max_trajectory_length", "2")
        requests = list(api.requests)
    folder = tmp_path / "pyautogui" / "screenshot" / "fake-vlm" / "os"
    status = status_of(folder / GUI_TASK)
    assert status["status"] == "success" and status["score"] == 1.0, out.stdout + out.stderr
    assert status["steps"] == 5 and status["model"] == "fake-vlm"
    traj = [json.loads(line) for line in (folder / GUI_TASK / "traj.jsonl").read_text().splitlines()]
    assert "not valid Python" in traj[0]["parse_error"] and traj[0]["action"] is None
    assert [t["action_struct"]["type"] for t in traj[1:]] == ["PYAUTOGUI", "PYAUTOGUI", "MOVE_TO", "DONE"]
    assert traj[2]["action_struct"]["text"] == "mkdir -p ~/projects/demo" and traj[2]["action_struct"]["keys"] == ["enter"]
    assert traj[1]["parse_error"] is None and traj[1]["tokens_in"] == 1234 and traj[1]["latency_s"] >= 0
    assert traj[2]["tokens_in"] is None  # a turn's cost is on its first action only
    assert traj[3]["action"] == "pyautogui.moveTo(960, 540)"
    assert traj[3]["action_struct"] == {"type": "MOVE_TO", "x": 960, "y": 540, "path": None, "text": None,
                                        "keys": None}
    assert traj[3]["screen_mapping"] == {"model": [1280, 720], "screen": [1920, 1080]}
    assert traj[4]["action"] == "DONE" and traj[4]["done"] is True and traj[4]["reward"] == 1.0
    assert all(set(t) == TRAJ_KEYS for t in traj)
    assert (folder / GUI_TASK / "result.txt").read_text().strip() == "1.0"
    assert out.returncode == 0 and len(requests) == 4
    assert any(part["type"] == "image_url" for part in requests[-1]["messages"][-1]["content"])
