"""Every score says why: an agent answers each smoke task wrongly on purpose (a typo, a wrong count, a missing
line, nothing at all...), and each task's status.json, traj.jsonl and summary name the difference.

The agent is the example of docs/agents.md ("Your own agent"), taken from the page and plugged into run.py by
``--agent scripted_agent:ScriptedAgent`` as a user would (two VMs); its pyautogui actions are Python code run
by the guest's executor. One run serves both: the reasons (issue 55) and the plug-in API (issue 58). About
1.5 minutes under emulation here.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "evaluation_examples" / "test_smoke.json"


def py(code: str) -> str:
    """A pyautogui-space action: Python code the guest's executor runs (as the desktop user)."""
    return code


#: task id -> (the wrong answer's actions before DONE (or the last action), the reason kind, substrings of its text)
WRONG = {
    # Calc: nothing done, the workbook is left as it opened (no Total column)
    "c41e7a52-2f0b-4d8e-9a61-5b3c7d9e1f20": ([], "structure_mismatch", ["expected 4", "'Total'"]),
    # JupyterLab: the notebook is never run
    "5d2f8b14-6a3c-4e97-b1d0-8c4e2a6f9b31": ([], None, ["cell"]),
    # a typo in the file's only line
    "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11": ([py("open('/home/user/Desktop/hello.txt', 'w').write('hello wrld\\n')")],
                                             "rule_failed", ["hello wrld"]),
    # a misspelt folder
    "8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62": ([py("import os; os.makedirs('/home/user/projects/dmeo', exist_ok=True)")],
                                             "rule_failed", ["succeed"]),
    # the right table with one customer's order count off by one
    "9b7c3e21-4d5a-4f68-8e2b-1a9c6d3f5e42": ([py(
        "import sqlite3; c = sqlite3.connect('/home/user/shop.db'); "
        "c.execute('CREATE TABLE customer_totals (customer TEXT, order_count INTEGER, total REAL)'); "
        "c.execute('INSERT INTO customer_totals SELECT customer, COUNT(*), ROUND(SUM(amount), 2) FROM orders "
        "GROUP BY customer'); "
        "c.execute(\"UPDATE customer_totals SET order_count = order_count - 1 WHERE customer = 'Cobalt Labs'\"); "
        "c.commit()")], "value_mismatch", ["Cobalt Labs"]),
    # no table at all
    "2e8d4a63-7b1c-4a95-9f3e-6c2b8d1a4f53": ([], None, ["customer_totals"]),
    # the counts exported with one wrong (search 46, not 47)
    "71f4c9a8-3e2d-4b6a-a5c7-9d8e1f2b3c64": ([py(
        "open('/home/user/event_counts.csv', 'w').write('event_type,n\\npage_view,100\\nsearch,46\\ncheckout,33\\n"
        "add_to_cart,32\\nsignup,28\\n')")], "value_mismatch", ["search", "46"]),
    # the ERROR lines with the second one left out
    "e05a7c36-1b9d-4f2e-8a4c-7d6b3e9f2a86": ([py(
        "lines = [l for l in open('/home/user/logs/app.log') if ' ERROR ' in l]; "
        "open('/home/user/errors.txt', 'w').writelines(lines[:1] + lines[2:])")], "value_mismatch", ["line 2"]),
    # an infeasible task answered DONE instead of FAIL
    "f8c1d247-5e6a-4b3c-9d8f-2a1b7c4e6d97": ([], "infeasible", ["not FAIL"]),
    # the export never downloaded
    "755fa5e4-f866-50a4-95a2-91f2a0e09e79": ([], "missing_result", ["orders_west.csv"]),
}


def example_agent_source() -> str:
    """The example agent of docs/agents.md ("Your own agent"), as the page gives it."""
    text = (ROOT / "docs" / "agents.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    source = next((b for b in blocks if "class ScriptedAgent(Agent)" in b), None)
    assert source, "docs/agents.md lost its example agent (class ScriptedAgent)"
    return source


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory):
    """run.py over the smoke suite with the docs' example agent, plugged in by --agent module:Class, playing
    the wrong answers of WRONG; returns (the model folder, task id -> status.json, task id -> task folder)."""
    from desktop_env.image.builder import ensure_image

    image = ensure_image("base")
    work = tmp_path_factory.mktemp("wrong_answers")
    (work / "scripted_agent.py").write_text(example_agent_source())
    (work / "answers.json").write_text(json.dumps({task: actions for task, (actions, _, _) in WRONG.items()}))
    out = work / "results"
    env = {**os.environ, "PYTHONPATH": str(work), "SCRIPTED_ACTIONS": str(work / "answers.json")}
    done = subprocess.run([sys.executable, "run.py", "--agent", "scripted_agent:ScriptedAgent",
                           "--observation_type", "screenshot", "--test_all_meta_path", str(SMOKE),
                           "--result_dir", str(out), "--path_to_vm", image.name, "--max_steps", "5",
                           "--num_envs", "2"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    model_dir = out / "pyautogui" / "screenshot" / "scripted"  # named after the class's `name`
    folders = {p.parent.name: p.parent for p in model_dir.rglob("status.json")}
    assert set(folders) == set(WRONG), "the smoke suite changed: update WRONG"
    return model_dir, {t: json.loads((f / "status.json").read_text()) for t, f in folders.items()}, folders


@pytest.mark.parametrize("task_id", sorted(WRONG))
def test_a_wrong_answer_records_why(wrong_run, task_id):
    _, records, folders = wrong_run
    record = records[task_id]
    assert record["status"] == "wrong_result" and record["score"] == 0.0, record
    reason = record["reason"]
    _, kind, words = WRONG[task_id]
    assert reason and reason["kind"] not in ("passed", "unexplained"), reason
    if kind:
        assert reason["kind"] == kind, reason
    for word in words:
        assert word in reason["text"], f"{task_id}: {word!r} not in the reason {reason}"
    last = json.loads((folders[task_id] / "traj.jsonl").read_text().splitlines()[-1])
    assert last["info"]["reason"] == reason  # the scoring step of the trajectory holds it too


def test_the_summary_counts_the_failures_by_reason(wrong_run):
    model_dir, records, _ = wrong_run
    summary = json.loads((model_dir / "summary.json").read_text())
    assert sum(summary["failure_reasons"].values()) == len(WRONG)
    assert "unexplained" not in summary["failure_reasons"]
