"""The report of a real run: oracle and noop over the smoke suite (the shared ``smoke_results`` session fixture)."""
import csv
import json
from pathlib import Path

import pytest
from browser_checks import check_report_in_browser

from desktop_env.report import build_report

pytestmark = pytest.mark.vm
SUITE_ROOT = Path(__file__).resolve().parents[2] / "evaluation_examples"


@pytest.fixture(scope="module")
def real_report(smoke_results, tmp_path_factory):
    dirs = smoke_results.result_dirs
    return build_report([dirs["oracle"], dirs["noop"]], tmp_path_factory.mktemp("real_report"),
                        tasks_root=SUITE_ROOT)


def _task_folders(result_dir: Path) -> list[Path]:
    """Every task folder run.py wrote (each has status.json; result.txt only when the task was scored)."""
    return sorted(p.parent for p in Path(result_dir).rglob("status.json"))


def test_csv_numbers_match_the_result_files(real_report, smoke_results):
    with open(real_report.csv["tasks"], newline="") as f:
        rows = {(r["model"], r["task_id"]): r for r in csv.DictReader(f)}
    n_tasks = len(smoke_results.rows)  # the tasks the session's run covered
    truth = {}
    for model in ("oracle", "noop"):
        folders = _task_folders(smoke_results.result_dirs[model])
        assert len(folders) == n_tasks
        statuses = []
        for folder in folders:
            status = json.loads((folder / "status.json").read_text())
            row = rows[(model, folder.name)]
            assert row["status"] == status["status"]
            assert row["failure_kind"] == ("" if status["status"] == "success" else status["status"])
            assert int(row["steps"]) == status["steps"]
            result = folder / "result.txt"
            if result.is_file() and result.read_text().strip():
                assert float(row["score"]) == float(result.read_text())
            else:
                assert row["score"] == ""
            traj = folder / "traj.jsonl"
            lines = [ln for ln in traj.read_text().splitlines() if ln.strip()] if traj.is_file() else []
            assert len(next(r for r in real_report.results
                            if r.model == model and r.task_id == folder.name).trajectory) == len(lines)
            assert row["category"] != "uncategorized"  # every smoke task carries a pipeline category
            statuses.append((status["domain"], status["status"]))
        truth[model] = statuses
    with open(real_report.csv["overall"], newline="") as f:
        overall = {r["run"]: r for r in csv.DictReader(f)}
    with open(real_report.csv["by_app"], newline="") as f:
        by_app = {(r["run"], r["app"]): r for r in csv.DictReader(f)}
    with open(real_report.csv["failures"], newline="") as f:
        failures = {(r["run"], r["failure_kind"]): int(r["count"]) for r in csv.DictReader(f)}
    for model, statuses in truth.items():
        assert int(overall[model]["tasks"]) == n_tasks
        assert int(overall[model]["successes"]) == sum(s == "success" for _, s in statuses)
        for app in {d for d, _ in statuses}:
            mine = [s for d, s in statuses if d == app]
            assert int(by_app[(model, app)]["tasks"]) == len(mine)
            assert int(by_app[(model, app)]["successes"]) == sum(s == "success" for s in mine)
        for kind in {s for _, s in statuses if s != "success"}:
            assert failures[(model, kind)] == sum(s == kind for _, s in statuses)
    # the untouched start state solves no smoke task; the oracle solves at least one
    assert int(overall["noop"]["successes"]) == 0
    assert int(overall["oracle"]["successes"]) >= 1


def test_real_report_in_a_real_browser(real_report, chromium):
    oracle = max((r for r in real_report.results if r.model == "oracle" and r.success),
                 key=lambda r: len(r.trajectory))
    check_report_in_browser(chromium, real_report, "success", oracle.key, n_steps=len(oracle.trajectory))
