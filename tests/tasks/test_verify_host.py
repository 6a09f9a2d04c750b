"""`tasks verify` without a VM: verdicts and tables drawn from fabricated run.py result folders."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env import verify as v

ROOT = Path(__file__).resolve().parents[2]

FEASIBLE = {"id": "t-ok", "instruction": "make hello.txt", "config": [],
            "evaluator": {"func": "check_include_exclude",
                          "result": {"type": "vm_command_line", "command": "cat hello.txt"},
                          "expected": {"type": "rule", "rules": {"include": ["hello"]}}},
            "solution": [{"command": "echo hello > hello.txt", "shell": True}]}


def task(task_id, infeasible=False):
    t = dict(FEASIBLE, id=task_id)
    if infeasible:
        t["evaluator"] = {"func": "infeasible"}
    return t


@pytest.fixture
def fab(tmp_path, suite):
    """fab({task_id: (oracle, noop, infeasible)}) -> (index path, result dirs); None scores write no result.txt."""
    def make(spec, app="os"):
        for tid, (_, _, infeasible) in spec.items():
            suite(app, task(tid, infeasible))
        index = tmp_path / "evaluation_examples" / "test_x.json"
        index.write_text(json.dumps({app: list(spec)}))
        dirs = {m: tmp_path / "results" / m for m in v.MODELS}
        for tid, scores in spec.items():
            for model, score in zip(v.MODELS, scores[:2]):
                folder = v.result_folder(dirs[model], model, app, tid)
                folder.mkdir(parents=True, exist_ok=True)
                if score is not None:
                    (folder / "result.txt").write_text(f"{score}\n")
        return index, dirs
    return make


def test_verdicts(fab):
    index, dirs = fab({"proven": (1.0, 0.0, False), "oracle-fails": (0.5, 0.0, False),
                       "noop-passes": (1.0, 1.0, False), "both-bad": (0.0, 1.0, False),
                       "infeasible": (1.0, 0.0, True), "no-oracle": (None, 0.0, False)})
    table = v.collect(index, dirs)
    got = {r.task_id: r.verdict for r in table.rows}
    assert got == {"proven": v.PROVEN, "oracle-fails": v.ORACLE_FAILS, "noop-passes": v.NOOP_PASSES,
                   "both-bad": v.ORACLE_FAILS, "infeasible": v.INFEASIBLE_OK, "no-oracle": v.NOT_SCORED}
    assert not table.all_proven
    assert table.counts()[v.PROVEN] == 1
    assert [r.task_id for r in table.rows][0] == "proven"  # index order is kept


def test_all_proven_and_tables(fab):
    index, dirs = fab({"a": (1.0, 0.0, False), "b": (1.0, 0.0, True)})
    table = v.collect(index, dirs)
    table.date, table.image, table.recipe_hash = "2026-01-02", "base-abc123", "abc123"
    assert table.all_proven
    text = table.to_text()
    assert "2/2 tasks proven" in text and "infeasible ok" in text and "abc123" in text
    md = table.to_markdown().splitlines()
    assert md[2].startswith("| domain | task | oracle | noop | without essential steps | verdict | date |")
    assert "| os | `a` | 1.0 | 0.0 | - | proven | 2026-01-02 | `abc123` |" in md
    assert json.loads(json.dumps(table.to_json()))["tasks"][1]["verdict"] == v.INFEASIBLE_OK


def test_a_cli_gui_task_must_fail_without_its_essential_steps(tmp_path, suite):
    """The third run: a cli+gui task solved without its essential GUI steps is not proven; one whose
    replay scores 0.0 or breaks without them is."""
    cli_gui = dict(FEASIBLE, tags=["cli+gui"], solution=[
        {"command": "echo hello > hello.txt", "shell": True},
        {"gui": "click", "target": {"role": "push-button", "name": "OK"}, "essential": True}])
    ids = ["needs-gui", "gui-not-needed", "breaks-without", "cli-only"]
    for tid in ids:
        suite("os", dict(cli_gui, id=tid) if tid != "cli-only" else task(tid))
    index = tmp_path / "evaluation_examples" / "test_x.json"
    index.write_text(json.dumps({"os": ids}))
    assert v.write_index(index, tmp_path / "abl.json", cli_gui_only=True) == 3
    assert json.loads((tmp_path / "abl.json").read_text()) == {"os": ids[:3]}
    dirs = {m: tmp_path / "results" / m for m in (*v.MODELS, v.ABLATED)}
    for model, scores in (("oracle", [1.0] * 4), ("noop", [0.0] * 4), (v.ABLATED, [0.0, 1.0, None, None])):
        for tid, score in zip(ids, scores):
            folder = v.result_folder(dirs[model], model, "os", tid)
            folder.mkdir(parents=True, exist_ok=True)
            if score is not None:
                (folder / "result.txt").write_text(f"{score}\n")
    broke = v.result_folder(dirs[v.ABLATED], v.ABLATED, "os", "breaks-without")
    (broke / "status.json").write_text(json.dumps({"status": "task_error", "error": "SolutionStepFailed: file x, "
                                                   "field solution[1]: the reference solution's step failed"}))
    got = {r.task_id: r.verdict for r in v.collect(index, dirs).rows}
    assert got == {"needs-gui": v.PROVEN, "gui-not-needed": v.ESSENTIAL_NOT_NEEDED, "breaks-without": v.PROVEN,
                   "cli-only": v.PROVEN}
    rows = v.collect(index, {m: d for m, d in dirs.items() if m != v.ABLATED}).rows
    assert rows[0].ablated is None  # read only when its folder is given


def test_runs_that_exit_nonzero_are_reported_for_every_model(tmp_path, suite, monkeypatch):
    """run.py exits 1 when every ablated replay broke (task_error): the table still comes out, the broken
    replays count as 0.0, and a run that died before a task says why in that task's row."""
    cli_gui = dict(FEASIBLE, tags=["cli+gui"], solution=[
        {"command": "echo hello > hello.txt", "shell": True},
        {"gui": "click", "target": {"role": "push-button", "name": "OK"}, "essential": True}])
    for tid in ("broke", "never-ran"):
        suite("os", dict(cli_gui, id=tid))
    index = tmp_path / "evaluation_examples" / "test_x.json"
    index.write_text(json.dumps({"os": ["broke", "never-ran"]}))
    base = tmp_path / "results"

    def fake_run(config):
        model, result_dir = config.model, config.result_dir
        scores = {"oracle": {"broke": 1.0, "never-ran": None}, "noop": {"broke": 0.0, "never-ran": None},
                  v.ABLATED: {"broke": None, "never-ran": None}}[model]
        for tid, score in scores.items():
            if tid == "never-ran":
                continue
            folder = v.result_folder(result_dir, model, "os", tid)
            folder.mkdir(parents=True, exist_ok=True)
            if score is not None:
                (folder / "result.txt").write_text(f"{score}\n")
            else:
                (folder / "status.json").write_text(json.dumps({"status": "task_error", "error": "SolutionStepFailed: "
                                                                "field solution[1]: the step failed"}))
        (result_dir / "run.log").write_text("boom: the VM went away\n")
        return 0 if model == "oracle" else 1

    monkeypatch.setattr(v, "_image_identity", lambda path_to_vm, cache_dir: ("base-x", "x"))
    monkeypatch.setattr(v, "run_model", fake_run)
    rows = {r.task_id: r for r in v.verify(index, base).rows}
    assert rows["broke"].verdict == v.PROVEN and rows["broke"].ablated_score == 0.0
    assert "the run exited 1: boom" in rows["never-ran"].noop.detail
    assert "the run exited 1: boom" in rows["never-ran"].ablated.detail


def test_verify_runs_the_harness_with_a_run_config_per_model(fab, tmp_path, monkeypatch):
    """verify calls run_suite in-process with a RunConfig per model (no command line is built or parsed): each
    run into its own folder, its workers logging to its run.log, with the settings verify was given."""
    import desktop_env.harness.suite as suite_module
    from desktop_env.harness.config import RunConfig
    from desktop_env.harness.suite import RunOutcome

    index, _ = fab({"a": (None, None, False), "b": (None, None, False)})
    base = tmp_path / "verify"
    seen = []

    def fake_run_suite(config, report):
        seen.append(config)
        report(f"{config.model} ran")
        for task_id in ("a", "b"):
            folder = v.result_folder(config.result_dir, config.model, "os", task_id)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "result.txt").write_text("1.0\n" if config.model == "oracle" else "0.0\n")
        return RunOutcome(0)

    monkeypatch.setattr(v, "_image_identity", lambda path_to_vm, cache_dir: ("base-x", "x"))
    monkeypatch.setattr(suite_module, "run_suite", fake_run_suite)
    table = v.verify(index, base, num_envs=2, path_to_vm="base-x", settings={"task_timeout": 900.0})
    assert table.all_proven and [r.verdict for r in table.rows] == [v.PROVEN, v.PROVEN]
    assert [c.model for c in seen] == ["oracle", "noop"] and all(isinstance(c, RunConfig) for c in seen)
    for config in seen:
        assert config.result_dir == base / config.model and config.worker_log == base / config.model / "run.log"
        # the runs get the index of the tasks verification runs (here all of them), beside their results
        assert config.test_all_meta_path == base / "runnable.index.json" and config.test_config_base_dir == index.parent
        assert json.loads(config.test_all_meta_path.read_text()) == json.loads(index.read_text())
        assert (config.num_envs, config.path_to_vm, config.task_timeout) == (2, "base-x", 900.0)
        assert f"{config.model} ran" in config.worker_log.read_text()


def test_a_bad_setting_stops_verify_before_any_run(fab, tmp_path):
    index, _ = fab({"a": (1.0, 0.0, False)})
    out = subprocess.run([sys.executable, "-m", "desktop_env", "tasks", "verify", "--suite", str(index),
                          "--num_envs", "0", "--result_dir", str(tmp_path / "verify")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "error: --num_envs must be at least 1" in out.stderr, out.stdout + out.stderr
    assert not (tmp_path / "verify").exists()


def test_unscored_marked_unverified_with_detail(fab):
    index, dirs = fab({"crashed": (None, None, False)})
    folder = v.result_folder(dirs["oracle"], "oracle", "os", "crashed")
    (folder / "runtime.log").write_text("2026-01-01 10:00:00,000 run ERROR task crashed attempt 1 failed:\n"
                                        "2026-01-01 10:00:01,000 run ERROR SetupError: Calc never opened\n")
    row = v.collect(index, dirs).rows[0]
    assert row.verdict == v.NOT_SCORED
    assert "Calc never opened" in row.detail and "noop: no result.txt" in row.detail
    assert "unverified" in v.VerifyTable(index, [row]).to_markdown()


def test_status_json_gives_failure_detail(fab):
    index, dirs = fab({"t": (None, 0.0, False)})
    folder = v.result_folder(dirs["oracle"], "oracle", "os", "t")
    (folder / "status.json").write_text(json.dumps({"status": "error", "error": "TimeoutError: too slow"}))
    row = v.collect(index, dirs).rows[0]
    assert row.oracle.status == "error" and "TimeoutError: too slow" in row.detail


def test_unreadable_result_is_not_a_score(fab):
    index, dirs = fab({"t": (1.0, 0.0, False)})
    (v.result_folder(dirs["noop"], "noop", "os", "t") / "result.txt").write_text("n/a\n")
    row = v.collect(index, dirs).rows[0]
    assert row.noop.score is None and row.verdict == v.NOT_SCORED and "unreadable" in row.detail


def test_listed_task_without_file_names_index_and_field(tmp_path, fab):
    index, dirs = fab({"a": (1.0, 0.0, False)})
    index.write_text(json.dumps({"os": ["a", "ghost"]}))
    with pytest.raises(v.TaskConfigError) as err:
        v.collect(index, dirs)
    assert "ghost" in str(err.value) and "os[1]" in str(err.value)


def test_cli_reads_existing_results_and_exit_status(fab, tmp_path):
    index, dirs = fab({"a": (1.0, 0.0, False)})
    cmd = [sys.executable, "-m", "desktop_env", "tasks", "verify", "--suite", str(index), "--no-run",
           "--result_dir", str(tmp_path / "results"), "--markdown", str(tmp_path / "t.md")]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1/1 tasks proven" in out.stdout and "| os | `a` | 1.0 | 0.0 | - | proven |" in (tmp_path / "t.md").read_text()
    (v.result_folder(dirs["noop"], "noop", "os", "a") / "result.txt").write_text("1.0\n")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and v.NOOP_PASSES in out.stdout


def test_cli_missing_suite(tmp_path):
    out = subprocess.run([sys.executable, "-m", "desktop_env", "tasks", "verify", "--suite",
                          str(tmp_path / "nope.json"), "--no-run"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "nope.json" in out.stderr


def test_smoke_suite_shape():
    """The committed smoke suite: 8-10 tasks, a verbose/abstract pair, an infeasible task, every task solvable."""
    from desktop_env.tasks import load_tasks_from_index

    tasks = load_tasks_from_index(ROOT / "evaluation_examples" / "test_smoke.json")
    assert 8 <= len(tasks) <= 12
    ids = {t.id: t for t in tasks}
    pairs = [t for t in tasks if t.counterpart in ids and ids[t.counterpart].counterpart == t.id]
    assert {g for t in pairs for g in t.tags if g in ("verbose", "abstract")} == {"verbose", "abstract"}
    assert any(t.infeasible for t in tasks)
    for t in tasks:
        assert t.extra.get("solution") or (t.path.parent / "solution.sh").exists(), t.id
        assert {"gui", "cli", "cli+gui"} & set(t.tags) and {"verbose", "abstract"} & set(t.tags), t.id
        assert t.source and t.related_apps and t.action_number, t.id


def test_default_results_are_kept_per_image(tmp_path):
    """A rebuilt image starts from an empty folder: results of the image before are kept, never resumed."""
    from desktop_env.verify import default_result_dir

    suite = tmp_path / "test_smoke.json"
    one, two = (default_result_dir(suite, str(tmp_path / "cache"), name) for name in ("base-aaaa", "base-bbbb"))
    assert one != two and one.parent == two.parent == tmp_path / "cache" / "verify" / "test_smoke"
    assert one.name == "base-aaaa"


def test_the_robustness_sample_is_seeded_covers_every_domain_and_fits_the_image():
    """bench/verify_under_load.py --sample: the same seed picks the same tasks, every domain the image
    runs is in it, and no task asks for another image's profile or another interface tag."""
    sys.path.insert(0, str(ROOT / "bench"))
    from verify_under_load import sample_suite

    from desktop_env.image.states import parse_snapshot
    from desktop_env.tasks import load_task, task_file_for
    from desktop_env.tasks.solution import interface_of

    suite = ROOT / "evaluation_examples" / "test_gui.json"
    for profile in ("base", "data"):
        picked = sample_suite(suite, 10, 7, profile, "gui")
        assert picked == sample_suite(suite, 10, 7, profile, "gui")
        assert sum(map(len, picked.values())) == 10
        for domain, ids in picked.items():
            for task_id in ids:
                task = load_task(task_file_for(suite.parent / "examples", domain, task_id))
                assert parse_snapshot(task.snapshot)[0] in (None, profile) and interface_of(task) == "gui"
        assert {"calc", "jupyter", "chromium"} <= set(picked) if profile == "base" else \
            set(picked) == {"airflow", "dagster", "superset"}
    assert sample_suite(suite, 10, 7, "base", "gui") != sample_suite(suite, 10, 8, "base", "gui")


def test_tasks_without_a_solution_or_that_cannot_run_here_are_reported_not_run_nor_failed(tmp_path, suite,
                                                                                           monkeypatch):
    """A task with no reference solution, and one that needs Docker, are left out of every run and listed
    with their reason; the others are proven as usual, and the verification passes."""
    unsolved = {k: val for k, val in task("unsolved").items() if k != "solution"}
    docker = dict(task("docker"), config=[{"type": "execute", "parameters": {
        "command": "docker compose up -d", "shell": True}}])
    broken = dict(task("broken"), config=[{"type": "copyfile_from_host_to_guest", "parameters": {
        "src": "evaluation_examples/examples/os/absent.sql", "dest": "/home/user/a.sql"}}])
    for t in (task("solved"), unsolved, docker, broken):
        suite("os", t)
    index = tmp_path / "evaluation_examples" / "test_x.json"
    index.write_text(json.dumps({"os": ["solved", "unsolved", "docker", "broken"]}))
    base, ran = tmp_path / "verify", []

    def fake_run(config):
        ran.append((config.model, json.loads(config.test_all_meta_path.read_text())))
        folder = v.result_folder(config.result_dir, config.model, "os", "solved")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "result.txt").write_text("1.0\n" if config.model == "oracle" else "0.0\n")
        (folder / "status.json").write_text(json.dumps({"status": "done", "duration_s": 61.4}))
        return 0

    monkeypatch.setattr(v, "_image_identity", lambda path_to_vm, cache_dir: ("base-x", "x"))
    monkeypatch.setattr(v, "run_model", fake_run)
    table = v.verify(index, base)
    assert ran == [("oracle", {"os": ["solved"]}), ("noop", {"os": ["solved"]})]
    rows = {r.task_id: r for r in table.rows}
    assert rows["solved"].verdict == v.PROVEN and rows["solved"].oracle.seconds == 61.4
    assert rows["unsolved"].verdict == v.NO_SOLUTION and "reference_solutions" in rows["unsolved"].detail
    assert rows["docker"].verdict == v.NOT_RUNNABLE and "uses Docker" in rows["docker"].detail
    assert rows["broken"].verdict == v.NOT_RUNNABLE and "does not load" in rows["broken"].detail
    assert "absent.sql" in rows["broken"].detail
    assert table.all_proven
    text = table.to_text()
    assert "1/1 tasks proven" in text and "1 with no reference solution, 2 that cannot run here" in text
    assert "1.00 (61 s)" in text
    md = table.to_markdown()
    assert "| os | `solved` | 1.0 (61 s) | 0.0 (61 s) | - | proven |" in md
    assert "| os | `docker` | - | - | - | cannot run here: uses Docker (config[0] execute: docker compose up -d) |" in md
    assert table.to_json()["tasks"][0]["seconds"] == {"oracle": 61.4, "noop": 61.4}


def test_nothing_to_run_is_not_proven(tmp_path, suite, monkeypatch):
    suite("os", {k: val for k, val in task("unsolved").items() if k != "solution"})
    index = tmp_path / "evaluation_examples" / "test_x.json"
    index.write_text(json.dumps({"os": ["unsolved"]}))
    monkeypatch.setattr(v, "_image_identity", lambda path_to_vm, cache_dir: ("base-x", "x"))
    monkeypatch.setattr(v, "run_model", lambda config: pytest.fail("nothing should run"))
    table = v.verify(index, tmp_path / "verify")
    assert [r.verdict for r in table.rows] == [v.NO_SOLUTION] and not table.all_proven
    assert "0/0 tasks proven" in table.to_text()


def test_an_attempt_gets_the_time_its_longest_solution_needs(tmp_path, suite, monkeypatch, caplog):
    """Without --task_timeout, the runs give each attempt run.py's 1800 s, or 600 s plus verify.step (45 s) per
    step of the longest reference solution when that is more (times --time_scale); --task_timeout wins."""
    per_step = 45.0
    long_one = dict(task("long"), solution=[{"command": f"echo {i}", "shell": True} for i in range(140)])
    for t in (task("short"), long_one):
        suite("os", t)
    index = tmp_path / "evaluation_examples" / "test_x.json"
    index.write_text(json.dumps({"os": ["short"]}))
    monkeypatch.delenv("DESKTOP_ENV_TIME_SCALE", raising=False)
    assert v.default_task_timeout(index) == 1800.0
    index.write_text(json.dumps({"os": ["short", "long"]}))
    with caplog.at_level("INFO", logger=v.log.name):
        assert v.default_task_timeout(index) == 600 + 140 * per_step
    assert "os/long's reference solution has 140 steps" in caplog.text
    assert v.default_task_timeout(index, time_scale=1.5) == 1.5 * (600 + 140 * per_step)

    seen = {}

    def fake_run(config):
        seen[config.model] = config.task_timeout
        return 0

    import desktop_env.tasks as tasks_module

    reads = []
    real_load = tasks_module.load_task
    monkeypatch.setattr(tasks_module, "load_task", lambda path, *a, **k: (reads.append(Path(path).stem),
                                                                          real_load(path, *a, **k))[1])
    monkeypatch.setattr(v, "_image_identity", lambda path_to_vm, cache_dir: ("base-x", "x"))
    monkeypatch.setattr(v, "run_model", fake_run)
    v.verify(index, tmp_path / "verify")
    assert seen == {"oracle": 600 + 140 * per_step, "noop": 600 + 140 * per_step}
    # each task file is read three times: the table before the runs (a broken suite stops there), what they run
    # (its limit and indexes), and the table after them
    assert sorted(reads) == ["long"] * 3 + ["short"] * 3, reads
    v.verify(index, tmp_path / "verify", settings={"task_timeout": 900.0})
    assert seen == {"oracle": 900.0, "noop": 900.0}
