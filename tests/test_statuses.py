"""One status per result folder: planning (resume), the summary and `desktop-env report` read the same folders,
including ones written before reasons and statuses were unified and ones without status.json, and agree."""
import json
from collections import Counter
from pathlib import Path

import pytest

from desktop_env.harness.jobs import plan_jobs
from desktop_env.harness.options import parse_args
from desktop_env.harness.status import STATUSES, Status, classify, read_status
from desktop_env.harness.summary import summarize
from desktop_env.report import load_results

FEASIBLE = {"snapshot": "base", "instruction": "Write 42 into /tmp/a.txt.", "config": [],
            "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "cat /tmp/a.txt"},
                          "expected": {"type": "rule", "rules": {"expected": "42"}}}}
INFEASIBLE = {"snapshot": "base", "instruction": "Install notepad++.exe natively.", "config": [],
              "evaluator": {"func": "infeasible"}}


def line(step, action, parse_error=None, **extra):
    return json.dumps({"step_num": step, "action": action, "parse_error": parse_error, **extra})


#: task id -> (infeasible?, files of its result folder, the status every reader must give)
FOLDERS = {
    # status.json written before this change: no reason, the old field set
    "old-status-json": (False, {"status.json": json.dumps({"status": "wrong_result", "final": True, "score": 0.0,
                                                            "steps": 2, "duration_s": 9.5, "error": None}),
                                "result.txt": "0.0\n"}, "wrong_result"),
    # this change's status.json: a reason, and an agent error
    "new-status-json": (False, {"status.json": json.dumps({
        "status": "wrong_result", "final": True, "score": 0.0, "steps": 1,
        "reason": {"kind": "value_mismatch", "text": "expected '42', got '41'", "metric": "exact_match"}}),
        "result.txt": "0.0\n"}, "wrong_result"),
    "agent-error": (False, {"status.json": json.dumps({"status": "agent_error", "final": True, "score": 0.0,
                                                        "error": "the agent's predict raised KeyError: 'x'"}),
                            "result.txt": "0.0\n"}, "agent_error"),
    # folders of the other suites' harness: result.txt and traj.jsonl only
    "legacy-success": (False, {"result.txt": "1.0\n", "traj.jsonl": line(1, "DONE")}, "success"),
    "legacy-wrong": (False, {"result.txt": "0\n", "traj.jsonl": line(1, "pyautogui.click(1, 1)") + "\n"
                             + line(2, "DONE")}, "wrong_result"),
    "legacy-fail": (False, {"result.txt": "0.0\n", "traj.jsonl": line(1, "FAIL")}, "agent_fail"),
    # a parse error earlier in the run does not make the run a parse error: the last turn decides
    "legacy-parse-then-done": (False, {"result.txt": "0.0\n", "traj.jsonl": line(1, None, "no action found") + "\n"
                                       + line(2, "DONE")}, "wrong_result"),
    "legacy-parse-last": (False, {"result.txt": "0.0\n", "traj.jsonl": line(1, "FAIL") + "\n"
                                  + line(2, None, "no action found")}, "parse_error"),
    "legacy-infeasible-done": (True, {"result.txt": "0.0\n", "traj.jsonl": line(1, "DONE")}, "wrong_result"),
    "legacy-timeout": (False, {"traj.jsonl": line(1, "WAIT"),
                               "runtime.log": "2026-01-01 ERROR TimeoutError: the task took too long\n"}, "timeout"),
    "legacy-bad-score": (False, {"result.txt": "n/a\n", "traj.jsonl": line(1, "DONE")}, "infra_error"),
}


@pytest.fixture
def results(tmp_path):
    """A suite of the tasks above and a results folder holding their folders; returns (args, expected)."""
    examples = tmp_path / "suite" / "examples" / "os"
    index = {"os": sorted(FOLDERS)}
    model = tmp_path / "results" / "pyautogui" / "screenshot" / "agent"
    expected = {}
    for task_id, (infeasible, files, status) in FOLDERS.items():
        (examples / task_id).mkdir(parents=True)
        spec = {**(INFEASIBLE if infeasible else FEASIBLE), "id": task_id}
        (examples / task_id / f"{task_id}.json").write_text(json.dumps(spec))
        folder = model / "os" / task_id
        folder.mkdir(parents=True)
        for name, text in files.items():
            (folder / name).write_text(text)
        expected[task_id] = status
    (tmp_path / "suite" / "test_all.json").write_text(json.dumps(index))
    args = parse_args(["--model", "agent", "--test_all_meta_path", str(tmp_path / "suite" / "test_all.json"),
                       "--test_config_base_dir", str(tmp_path / "suite"), "--result_dir", str(tmp_path / "results")])
    return args, expected


def test_planning_summary_and_report_give_each_folder_the_same_status(results, tmp_path):
    args, expected = results
    plan = plan_jobs(args)
    planned = {task_id: record["status"] for (_, task_id, _), record in plan.records.items()}
    summary = summarize(args, list(plan.records.values()), [], 0)
    reported = {r.task_id: r.status for r in load_results(tmp_path / "results", tasks_root=tmp_path / "suite")}

    assert planned == expected
    assert reported == expected
    assert summary["statuses"] == dict(Counter(expected.values()))
    # what a rerun does follows from the same status: only the unscored, unfinished ones run again
    rerun = {job.task_id for job in plan.todo}
    assert rerun == {"legacy-timeout", "legacy-bad-score"}


def test_the_summary_counts_failures_by_reason_and_lists_agent_errors(results):
    args, _ = results
    plan = plan_jobs(args)
    summary = summarize(args, list(plan.records.values()), [], 0)
    assert summary["failure_reasons"]["value_mismatch"] == 1
    assert summary["failure_reasons"]["agent_error (no reason recorded)"] == 1
    assert [e["task_id"] for e in summary["agent_errors"]] == ["agent-error"]
    # an agent error is the agent's failure: in the success rate, unlike a task error
    assert summary["overall"]["runs"] == 9 and summary["overall"]["success_rate"] == round(1 / 9, 4)


def test_the_report_shows_the_reason(results, tmp_path):
    reported = {r.task_id: r for r in load_results(tmp_path / "results")}
    reason = reported["new-status-json"].reason
    assert reason.kind == "value_mismatch" and "got '41'" in str(reason) and reason.metric == "exact_match"
    assert reported["old-status-json"].reason is None


def test_status_is_the_one_type():
    assert STATUSES == tuple(s.value for s in Status)
    assert not Status.INFRA_ERROR.final and Status.AGENT_ERROR.final and Status.AGENT_ERROR.scored
    assert not Status.TASK_ERROR.scored and not Status.EVALUATOR_ERROR.scored
    assert classify(0.0, "FAIL", False, feasible=False) is Status.WRONG_RESULT
    assert read_status(Path("/nonexistent-folder")) is None
