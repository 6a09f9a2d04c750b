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


def test_a_check_that_finds_no_task_fails(tmp_path):
    """A check that passes on nothing is a false green: a folder of other files, or a file holding {}."""
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "notes.json").write_text('{"hello": "world"}')
    (garbage / "data.csv").write_text("a,b\n1,2\n")
    (garbage / "broken.txt").write_bytes(b"\x00\xff")
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    for target in (garbage, empty):
        p = run("check", str(target))
        assert p.returncode == 1, p.stdout
        assert "0 loaded, 1 error(s)" in p.stdout and ("no task file found" in p.stdout or "lists no task" in p.stdout)
        p = run("check", "--json", str(target))
        assert p.returncode == 1 and json.loads(p.stdout)["tasks"] == 0


def test_untagged_task_files_are_counted_as_desktop_tasks(tmp_path):
    """The general suite tags no interface; every one of its tasks is desktop work (tagged cli ones are not)."""
    app = tmp_path / "evaluation_examples" / "examples" / "chrome"
    tasks = {"0a1b2c3d-0000-4000-8000-0000000000a1": [], "0a1b2c3d-0000-4000-8000-0000000000a2": [],
             "0a1b2c3d-0000-4000-8000-0000000000a3": ["cli"]}
    for tid, tags in tasks.items():
        (app / tid).mkdir(parents=True)
        (app / tid / f"{tid}.json").write_text(json.dumps({
            "id": tid, "snapshot": "chrome", "instruction": "Open the settings page.", "config": [],
            "evaluator": {"func": "infeasible"}, "tags": tags}))
    p = run("check", str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 cli, 2 untagged (2 of 3 need the GUI; the 2 untagged are desktop tasks" in p.stdout
    assert json.loads(run("check", "--json", str(tmp_path)).stdout)["need_gui"] == 2


def test_each_task_says_whether_it_runs_here_and_on_which_image(tmp_path):
    p = run("check", str(GOOD))
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert f"bigquery/{IDS['bigquery']}   not runnable here: needs a cloud account (setup step bigquery_init)" in lines
    assert f"dbt/{IDS['dbt']}        runs on image spider2v" in lines  # its snapshot "dbt" needs the spider2v image
    assert f"excel/{IDS['excel']}      runs on any image" in lines
    assert ("runs here: 4 of 5 (3 on any image, 1 on image spider2v); not runnable here: 1 "
            "(needs a cloud account: 1)") in lines
    report = json.loads(run("check", "--json", str(GOOD)).stdout)["runs_here"]
    assert (report["runnable"], report["not_runnable"], report["by_reason"]) == (4, 1, {"account": 1})
    row = next(r for r in report["tasks"] if r["app"] == "bigquery")
    assert row["runs_here"] is False and row["reasons"][0]["kind"] == "account" and row["image"] is None
    # a task whose setup downloads from the internet runs with a download mirror only
    task_id = IDS["os"]
    task_dir = tmp_path / "evaluation_examples/examples/os" / task_id
    shutil.copytree(GOOD / "evaluation_examples/examples/os" / task_id, task_dir)
    task_file = task_dir / f"{task_id}.json"
    data = json.loads(task_file.read_text())
    data["config"].append({"type": "download", "parameters": {"files": [
        {"url": "https://example.com/data.csv", "path": "/home/user/data.csv"}]}})
    task_file.write_text(json.dumps(data))
    p = run("check", str(task_file))
    assert f"os/{task_id}   not runnable here: fetches from the internet (config[{len(data['config']) - 1}]" \
           f".parameters.files[0].url: https://example.com/data.csv)" in p.stdout
    assert run("check", "--download_mirror", str(tmp_path), str(task_file)).returncode == 2  # no manifest there
    (tmp_path / "manifest.json").write_text(json.dumps({"version": 1, "files": {}}))
    p = run("check", "--download_mirror", str(tmp_path), str(task_file))
    assert f"os/{task_id}   runs on any image" in p.stdout, p.stdout
