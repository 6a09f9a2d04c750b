"""``desktop-env tasks check`` run as a subprocess on the sample suites."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from task_samples import BAD, GOOD, IDS

REPO = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "desktop_env.cli_tasks", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_good_suite_passes_and_reports_names():
    p = run("check", str(GOOD))
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "5 task file(s)" in out and "5 loaded, 0 error(s)" in out
    assert "bigquery_init" in out and "needs account" in out
    assert "compare_table" in out and "supported" in out
    assert "1 warning(s)" in out
    for app in IDS:
        assert app in out


def test_bad_suite_fails_and_names_file_field_and_suggestion():
    p = run("check", str(BAD))
    assert p.returncode == 1
    out = p.stdout
    assert "7 error(s)" in out
    assert "field evaluator.func[1]: unknown metric 'compare_tabel'; did you mean 'compare_table'" in out
    assert "0bad0000-0000-4000-8000-000000000001.json" in out
    assert "malformed JSON" in out and "truncated" in out
    assert "UNKNOWN" in out


def test_json_report():
    p = run("check", "--json", str(BAD))
    assert p.returncode == 1
    report = json.loads(p.stdout)
    fields = {e["field"] for e in report["errors"]}
    assert {"evaluator.func[1]", "config[0].type", "instruction", "evaluation.func"} <= fields
    unknown = {n["name"] for n in report["names"] if n["status"] == "unknown"}
    assert unknown == {"compare_tabel", "google_chrome_browzer", "vm_fiel", "compare_cvs"}


def test_through_the_main_cli():
    p = subprocess.run([sys.executable, "-m", "desktop_env", "tasks", "check", str(GOOD)], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "5 loaded" in p.stdout


def test_an_index_file_checks_the_tasks_it_lists(tmp_path):
    p = run("check", "evaluation_examples/test_smoke.json")
    assert p.returncode == 0, p.stdout + p.stderr
    smoke = json.loads((REPO / "evaluation_examples/test_smoke.json").read_text())
    n = sum(len(ids) for ids in smoke.values())
    assert f"{n} task file(s) listed by evaluation_examples/test_smoke.json: {n} loaded, 0 error(s)" in p.stdout
    assert "need the GUI" in p.stdout
    suite = tmp_path / "evaluation_examples"
    shutil.copytree(GOOD / "evaluation_examples" / "examples", suite / "examples")
    app = sorted(IDS)[0]
    (suite / "test_two.json").write_text(json.dumps({app: [IDS[app], "no-such-task"]}))
    p = run("check", str(suite / "test_two.json"))
    assert p.returncode == 1
    assert "1 task file(s) listed by" in p.stdout and "1 loaded, 1 error(s)" in p.stdout
    assert f"field {app}[1]" in p.stdout and "'no-such-task' is listed but has no file" in p.stdout


def test_missing_path():
    p = run("check", str(GOOD / "nope"))
    assert p.returncode == 2 and "does not exist" in p.stderr
