"""Fabricated results folders in both layouts run.py has written: with status.json and structured
actions (model ``agentA``, with trials), and the older one with only result.txt (model ``legacy``)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from PIL import Image

CAT_A, CAT_T = "data_analysis_and_visualization", "traditional_data_processing"

T_CALC_OK = "11111111-0000-4000-8000-000000000001"
T_CALC_FAIL = "11111111-0000-4000-8000-000000000002"
T_OS_TIMEOUT = "11111111-0000-4000-8000-000000000003"
T_OS_PARSE = "11111111-0000-4000-8000-000000000004"
T_OS_TRIALS = "11111111-0000-4000-8000-000000000005"
T_OS_INFRA = "11111111-0000-4000-8000-000000000006"
T_OS_LEGACY_NORESULT = "11111111-0000-4000-8000-000000000007"

TAGS = {
    T_CALC_OK: ["gui", "verbose", CAT_A], T_CALC_FAIL: ["gui", "abstract", CAT_A],
    T_OS_TIMEOUT: ["cli", "abstract", CAT_T], T_OS_PARSE: ["cli", "verbose", CAT_T],
    T_OS_TRIALS: ["gui", "abstract", CAT_T], T_OS_INFRA: ["cli", "abstract", CAT_T],
    T_OS_LEGACY_NORESULT: ["gui", "verbose", CAT_T],
}
APP = {T_CALC_OK: "calc", T_CALC_FAIL: "calc"}


def _shot(path: Path, colour=(40, 50, 70)) -> None:
    Image.new("RGB", (1920, 1080), colour).save(path)


def _traj(folder: Path, steps: list[dict]) -> None:
    stamp = "20261123@0900{:02d}000000"
    _shot(folder / f"step_0_{stamp.format(0)}.png")
    with open(folder / "traj.jsonl", "w") as f:
        for i, s in enumerate(steps, 1):
            shot = f"step_{i}_{stamp.format(i * 2)}.png"
            _shot(folder / shot, (40 + i * 10, 50, 70))
            f.write(json.dumps({"step_num": i, "response": f"reply {i}", "reward": 0.0, "done": False,
                                "info": {}, "screenshot_file": shot, **s}) + "\n")


#: The reason the wrong trial of T_OS_TRIALS records (status.json's ``reason``).
REASON = {"kind": "value_mismatch", "text": "line 2: expected 'total 42', got 'total 41'", "metric": "compare_text_file"}


def _status(folder: Path, task_id: str, model: str, status: str, score, steps: int, duration_s: float,
            trial: int = 1, error: str | None = None, reason: dict | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "status.json").write_text(json.dumps({"reason": reason,
        "task_id": task_id, "domain": APP.get(task_id, "os"), "model": model, "trial": trial,
        "action_space": "pyautogui", "observation_type": "screenshot", "status": status, "final": True,
        "score": score, "steps": steps, "duration_s": duration_s, "attempts": 1, "error": error,
        "started": "2026-11-23T09:00:00+00:00", "finished": "2026-11-23T09:01:00+00:00",
        "tags": TAGS[task_id], "related_apps": [APP.get(task_id, "terminal")]}))
    if score is not None:
        (folder / "result.txt").write_text(f"{score}\n")
    (folder / "runtime.log").write_text("setup done\n")


def make_results(root: Path) -> Path:
    """Write the fabricated run under ``root``; returns ``root``."""
    base = root / "pyautogui" / "screenshot"
    a = base / "agentA"
    f = a / "calc" / T_CALC_OK
    _status(f, T_CALC_OK, "agentA", "success", 1.0, 3, 12.5)
    _traj(f, [
        {"action": "pyautogui.click(300, 200)", "action_struct": {"type": "CLICK", "x": 300, "y": 200}},
        {"action": {"action_type": "DRAG_TO", "x": 900, "y": 700},
         "action_struct": {"type": "DRAG_TO", "x": 900, "y": 700, "path": [[300, 200], [900, 700]]}},
        {"action": "pyautogui.write('=SUM(A1:A9)')", "action_struct": {"type": "TYPING", "text": "=SUM(A1:A9)"}},
    ])
    if shutil.which("ffmpeg"):
        subprocess.run(["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=blue:s=320x180:d=1",
                        "-pix_fmt", "yuv420p", str(f / "recording.mp4")], check=True)
    f = a / "calc" / T_CALC_FAIL
    _status(f, T_CALC_FAIL, "agentA", "agent_fail", 0.0, 2, 30.0)
    _traj(f, [{"action": "pyautogui.hotkey('ctrl', 's')", "action_struct": {"type": "HOTKEY", "keys": ["ctrl", "s"]}},
              {"action": "FAIL", "action_struct": {"type": "FAIL"}}])
    f = a / "os" / T_OS_TIMEOUT
    _status(f, T_OS_TIMEOUT, "agentA", "timeout", 0.0, 5, 1800.0, error="task attempt exceeded --task_timeout 1800 s")
    _traj(f, [{"action": {"action_type": "WAIT"}, "action_struct": {"type": "WAIT"}}] * 5)
    f = a / "os" / T_OS_PARSE
    _status(f, T_OS_PARSE, "agentA", "parse_error", 0.0, 1, 8.0)
    _traj(f, [{"action": None, "action_struct": {"type": None}, "parse_error": "no code block in the reply"}])
    for trial, (st, score) in enumerate([("success", 1.0), ("wrong_result", 0.0)], 1):
        f = a / "os" / T_OS_TRIALS / f"trial_{trial}"
        _status(f, T_OS_TRIALS, "agentA", st, score, 2, 20.0 + trial, trial=trial,
                reason=REASON if st == "wrong_result" else None)
        _traj(f, [{"action": "pyautogui.press('enter')"}, {"action": "DONE"}])
    f = a / "os" / T_OS_INFRA
    _status(f, T_OS_INFRA, "agentA", "infra_error", None, 0, 3.0, error="VMLaunchError: qemu exited early")

    old = base / "legacy" / "os"
    f = old / T_OS_TIMEOUT  # old layout: no status.json, no action_struct
    f.mkdir(parents=True)
    _traj(f, [{"action": "pyautogui.click(100, 100)\npyautogui.dragTo(500, 400)"}, {"action": "DONE"}])
    (f / "result.txt").write_text("1.0\n")
    f = old / T_OS_TRIALS
    f.mkdir(parents=True)
    _traj(f, [{"action": {"action_type": "TYPING", "text": "ls"}}, {"action": "FAIL"}])
    (f / "result.txt").write_text("0.0\n")
    f = old / T_OS_LEGACY_NORESULT
    f.mkdir(parents=True)
    _traj(f, [{"action": "pyautogui.press('enter')"}])
    (f / "runtime.log").write_text("task attempt 1 failed:\nTimeoutError: task attempt exceeded --task_timeout 60 s\n")
    return root


def make_suite(root: Path) -> Path:
    """Task files for every task id above (tags and instructions), as a suite root."""
    for tid, tags in TAGS.items():
        d = root / "examples" / APP.get(tid, "os") / tid
        d.mkdir(parents=True)
        (d / f"{tid}.json").write_text(json.dumps({
            "id": tid, "snapshot": "base", "instruction": f"instruction of {tid[-1]}", "tags": tags,
            "related_apps": [APP.get(tid, "terminal")], "config": [],
            "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": {}},
                          "expected": {"type": "rule", "rules": {}}}}))
    return root
