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
    return sorted(p.parent for p in Path(result_dir).rglob("result.txt"))


def test_csv_numbers_match_the_result_files(real_report, smoke_results):
    with open(real_report.csv["tasks"], newline="") as f:
        rows = {(r["model"], r["task_id"]): r for r in csv.DictReader(f)}
    n_tasks = sum(len(ids) for ids in json.loads((SUITE_ROOT / "test_smoke.json").read_text()).values())
    expected_success = {}
    for model in ("oracle", "noop"):
        folders = _task_folders(smoke_results.result_dirs[model])
        assert len(folders) == n_tasks
        ok = 0
        for folder in folders:
            score = float((folder / "result.txt").read_text())
            row = rows[(model, folder.name)]
            assert float(row["score"]) == score
            lines = [ln for ln in (folder / "traj.jsonl").read_text().splitlines() if ln.strip()]
            assert int(row["steps"]) == len(lines)
            status_file = folder / "status.json"
            if status_file.is_file():
                assert row["status"] == json.loads(status_file.read_text())["status"]
            assert row["category"] != "uncategorized"  # every smoke task carries a pipeline category
            ok += row["status"] == "success"
        expected_success[model] = ok
    with open(real_report.csv["overall"], newline="") as f:
        overall = {r["run"]: r for r in csv.DictReader(f)}
    for model, ok in expected_success.items():
        assert int(overall[model]["tasks"]) == n_tasks
        assert int(overall[model]["successes"]) == ok
    # the smoke suite is verified: the oracle solves every task, the untouched start state solves none
    assert expected_success["oracle"] == n_tasks
    assert expected_success["noop"] == 0


def test_real_report_in_a_real_browser(real_report, chromium):
    oracle = max((r for r in real_report.results if r.model == "oracle"), key=lambda r: len(r.trajectory))
    check_report_in_browser(chromium, real_report, "success", oracle.key, n_steps=len(oracle.trajectory))
