"""run.py without a VM: flags, status semantics, resume planning, summary with pass@k, --exclude_account, manifest."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.agents.base import Agent
from desktop_env.harness.jobs import Job, job_folder, plan_jobs, run_job, split_by_image
from desktop_env.harness.layout import write_json_atomic
from desktop_env.harness.options import parse_args
from desktop_env.harness.status import classify
from desktop_env.harness.summary import format_summary, summarize

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests/data/tasks_samples/good/evaluation_examples"
OS_TASK = "0a1b2c3d-0000-4000-8000-000000000005"
EXCEL_TASK = "0a1b2c3d-0000-4000-8000-000000000002"
BQ_TASK = "0a1b2c3d-0000-4000-8000-000000000004"


def write_index(tmp_path, index):
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    return path


def args_for(tmp_path, index, *extra):
    return parse_args(["--test_all_meta_path", str(write_index(tmp_path, index)), "--test_config_base_dir",
                          str(SAMPLES), "--result_dir", str(tmp_path / "results"), *extra])


@pytest.mark.parametrize("score,last,parse_error,feasible,status", [
    (1.0, "DONE", False, True, "success"),
    (1.0, "FAIL", False, False, "success"),        # infeasible task, agent said FAIL
    (0.0, "FAIL", False, True, "agent_fail"),
    (0.0, None, True, True, "parse_error"),
    (0.5, "DONE", True, True, "parse_error"),
    (0.5, "DONE", False, True, "wrong_result"),
    (0.0, "PYAUTOGUI", False, True, "wrong_result"),
])
def test_classify(score, last, parse_error, feasible, status):
    assert classify(score, last, parse_error, feasible) == status


def test_flags_and_help():
    out = subprocess.run([sys.executable, "run.py", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "not implemented" not in out.stdout
    for flag in ("--base_url", "--api_key_env", "--model_screen", "--trials", "--exclude_account", "--seed", "som"):
        assert flag in out.stdout
    with pytest.raises(SystemExit):
        parse_args(["--model_screen", "big"])
    with pytest.raises(SystemExit):
        parse_args(["--model", "human", "--num_envs", "2"])
    assert parse_args(["--model_screen", "1024x768"]).model_screen_size == (1024, 768)


def test_plan_resumes_final_statuses_and_retries_infra_errors(tmp_path):
    index = {"os": [OS_TASK], "excel": [EXCEL_TASK], "jupyter": ["0a1b2c3d-0000-4000-8000-000000000003"]}
    args = args_for(tmp_path, index)
    os_dir, excel_dir = job_folder(args, "os", OS_TASK), job_folder(args, "excel", EXCEL_TASK)
    os_dir.mkdir(parents=True)
    excel_dir.mkdir(parents=True)
    write_json_atomic(os_dir / "status.json", {"status": "infra_error", "final": False, "score": None})
    (excel_dir / "result.txt").write_text("1.0\n")  # a legacy folder: final
    plan = plan_jobs(args)
    todo, records, excluded = plan.todo, plan.records, plan.excluded
    assert [(j.domain, j.trial) for j in todo] == [("os", 1), ("jupyter", 1)]
    assert todo[0].task.id == OS_TASK  # loaded once, in the plan; the worker does not load it again
    assert records[("excel", EXCEL_TASK, 1)]["status"] == "success" and records[("excel", EXCEL_TASK, 1)]["final"]
    assert records[("os", OS_TASK, 1)]["status"] == "infra_error" and excluded == 0
    write_json_atomic(os_dir / "status.json", {"status": "timeout", "final": True, "score": 0.0})
    todo = plan_jobs(args).todo
    assert [j.domain for j in todo] == ["jupyter"]
    # trials go to trial_<k> folders
    args3 = args_for(tmp_path, {"os": [OS_TASK]}, "--trials", "3")
    todo = plan_jobs(args3).todo
    assert [j.folder.name for j in todo] == ["trial_1", "trial_2", "trial_3"]
    assert todo[0].folder.parent == os_dir


def test_missing_task_file_is_a_clear_error(tmp_path):
    args = args_for(tmp_path, {"os": ["00000000-0000-4000-8000-00000000dead"]})
    with pytest.raises(Exception, match="00000000-0000-4000-8000-00000000dead has no file under"):
        plan_jobs(args)


def record(task, status, score, trial=1, steps=3, domain="os", tags=("cli", "verbose", "data_warehousing")):
    return {"domain": domain, "task_id": task, "trial": trial, "status": status,
            "final": status != "infra_error", "score": score, "steps": steps, "duration_s": 10.0,
            "tags": list(tags), "error": "VMError: died" if status == "infra_error" else None}


def test_summary_mean_pass_at_k_groups_and_infra_apart(tmp_path):
    args = args_for(tmp_path, {"os": [OS_TASK]}, "--trials", "2")
    records = [record("a", "success", 1.0, 1), record("a", "wrong_result", 0.0, 2),
               record("b", "agent_fail", 0.0, 1, tags=("gui", "abstract")), record("b", "parse_error", 0.0, 2,
                                                                                   tags=("gui", "abstract")),
               record("c", "infra_error", None, 1, domain="excel"), record("d", "task_error", None, 1)]
    summary = summarize(args, records, [], 1)
    overall = summary["overall"]
    assert (overall["tasks"], overall["runs"], overall["mean_score"], overall["pass_at_k"]) == (2, 4, 0.25, 0.5)
    assert overall["success_rate"] == 0.25 and overall["mean_steps"] == 3 and summary["k"] == 2
    assert summary["by_guidance"]["verbose"]["pass_at_k"] == 1.0 and summary["by_guidance"]["abstract"]["mean_score"] == 0
    assert summary["by_category"]["data_warehousing"]["runs"] == 2
    assert summary["by_domain"]["excel"]["runs"] == 0
    assert summary["statuses"] == {"success": 1, "wrong_result": 1, "agent_fail": 1, "parse_error": 1,
                                   "infra_error": 1, "task_error": 1}
    assert summary["infra_errors"] == [{"domain": "excel", "task_id": "c", "trial": 1, "error": "VMError: died"}]
    table = format_summary(summary)
    assert "pass@2" in table and "infra errors (not in the scores):" in table and "excel/c trial 1" in table
    assert "guidance: verbose" in table


def test_exclude_account_and_already_done_run_needs_no_vm(tmp_path):
    index = write_index(tmp_path, {"bigquery": [BQ_TASK], "excel": [EXCEL_TASK]})
    results = tmp_path / "results"
    done = results / "pyautogui/screenshot/noop/excel" / EXCEL_TASK
    done.mkdir(parents=True)
    (done / "status.json").write_text(json.dumps(record(EXCEL_TASK, "wrong_result", 0.0, domain="excel")))
    out = subprocess.run([sys.executable, "run.py", "--model", "noop", "--exclude_account", "--test_all_meta_path",
                          str(index), "--test_config_base_dir", str(SAMPLES), "--result_dir", str(results)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 tasks: 1 already done, 0 to run" in out.stdout and "1 needing an account skipped" in out.stdout
    summary = json.loads((results / "pyautogui/screenshot/noop/summary.json").read_text())
    assert summary["excluded_account"] == 1 and summary["overall"]["runs"] == 1
    manifest = json.loads((results / "pyautogui/screenshot/noop/manifest.json").read_text())
    assert manifest["model"] == "noop" and manifest["prompt_version"] and manifest["finished"]
    assert manifest["parameters"]["exclude_account"] is True and len(manifest["git"]["commit"]) == 40
    assert "image" in manifest


def test_unknown_model_and_missing_index(tmp_path):
    out = subprocess.run([sys.executable, "run.py", "--model", "orcale", "--result_dir", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "did you mean 'oracle'" in out.stderr
    out = subprocess.run([sys.executable, "run.py", "--test_all_meta_path", str(tmp_path / "nope.json"),
                          "--result_dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "nope.json" in out.stderr


def test_a_typo_in_the_provider_or_a_file_as_result_dir_writes_nothing(tmp_path):
    """Both were checked only per task: every task became a final task_error (so the rerun with the right flag
    planned nothing to do), or write_manifest raised NotADirectoryError after ten warnings per task."""
    out = subprocess.run([sys.executable, "run.py", "--model", "noop", "--provider_name", "vmware",
                          "--result_dir", str(tmp_path / "results")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "--provider_name 'vmware' is not a provider here (known: " in out.stderr
    assert "qemu" in out.stderr and not (tmp_path / "results").exists()
    out = subprocess.run([sys.executable, "run.py", "--model", "noop", "--provider_name", "qemuu",
                          "--result_dir", str(tmp_path / "results")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "did you mean 'qemu'" in out.stderr
    a_file = tmp_path / "results.txt"
    a_file.write_text("notes\n")
    for result_dir in (a_file, a_file / "sub"):
        out = subprocess.run([sys.executable, "run.py", "--model", "noop", "--result_dir", str(result_dir)],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and f"{a_file} is a file, not a folder" in out.stderr, out.stderr
        assert out.stdout == "" and a_file.read_text() == "notes\n"


def test_human_needs_a_terminal(tmp_path):
    out = subprocess.run([sys.executable, "run.py", "--model", "human", "--result_dir", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert out.returncode == 2 and "not a TTY" in out.stderr


def test_tasks_for_another_image_profile_are_skipped_with_the_flag_to_use():
    # a task whose snapshot names another suite's snapshot (libreoffice_calc) needs no profile (TaskSpec.image_profile)
    from desktop_env.tasks import TaskSpec

    jobs = [Job("os", task_id, 1, Path("t.json"), Path(task_id), TaskSpec.from_json({
        "id": task_id, "instruction": "x", "snapshot": snapshot, "evaluator": {"func": "infeasible"}}))
        for task_id, snapshot in (("a", "data:superset"), ("b", "base:chromium"), ("c", "libreoffice_calc"),
                                  ("d", "init_state"))]
    assert [j.image_profile for j in jobs] == ["data", "base", None, None]
    runnable, skipped = split_by_image(jobs, {"name": "base-x", "profile": "base"})
    assert [j.task_id for j in runnable] == ["b", "c", "d"]
    assert skipped == {"data": 1}
    runnable, skipped = split_by_image(jobs, {"name": "data-x", "profile": "data"})
    assert [j.task_id for j in runnable] == ["a", "b", "c", "d"]  # data extends base
    assert skipped == {}
    runnable, skipped = split_by_image(jobs, {"error": "no image"})
    assert len(runnable) == 4 and skipped == {}


class _HostOnlyEnv:
    """The env contract run_job uses, scoring with the real evaluator on a task whose getters stay on the host."""

    def __init__(self, cache_dir):
        self.cache_dir, self.task = cache_dir, None

    def reset(self, options=None):
        if options:
            self.task = options["task_config"]
        return {}, {}

    def screenshot_png(self):
        return b"\x89PNG\r\n\x1a\n"

    def step(self, action):
        from desktop_env.session import SetupContext
        from desktop_env.evaluators.evaluator import evaluate

        ctx = SetupContext(controller=None, task=self.task, cache_dir=self.cache_dir)
        return {}, evaluate(self.task, ctx, last_action=action), True, False, {}

    def close(self):
        pass


def test_a_crashing_metric_is_an_evaluator_error_not_a_wrong_result(tmp_path):
    """A grader bug: status evaluator_error with the traceback's tail, no result.txt, out of the success rate."""
    from desktop_env.agents.simple import NoopAgent
    from desktop_env.registry import METRICS

    def crashing(result, expected) -> float:
        return {"a": 1.0}[result]
    METRICS.register("test_run_py_crashing_metric")(crashing)
    try:
        task_dir = tmp_path / "suite/evaluation_examples/examples/os" / OS_TASK
        task_dir.mkdir(parents=True)
        (task_dir / f"{OS_TASK}.json").write_text(json.dumps({
            "id": OS_TASK, "instruction": "x", "config": [],
            "evaluator": {"func": "test_run_py_crashing_metric", "result": {"type": "rule", "rules": "b"}}}))
        args = args_for(tmp_path, {"os": [OS_TASK]}, "--model", "noop")
        folder = tmp_path / "results/os" / OS_TASK
        job = Job("os", OS_TASK, 1, task_dir / f"{OS_TASK}.json", folder)
        status = run_job(job, args, NoopAgent(), [_HostOnlyEnv(tmp_path / "cache")], None)
    finally:
        del METRICS.entries["test_run_py_crashing_metric"]
    assert status["status"] == "evaluator_error" and status["final"] and status["score"] is None
    assert "metric test_run_py_crashing_metric raised KeyError" in status["error"]
    assert "KeyError" in status["traceback"]
    written = json.loads((folder / "status.json").read_text())
    assert written["status"] == "evaluator_error" and "KeyError" in written["traceback"]
    assert not (folder / "result.txt").exists()
    summary = summarize(args, [{**record("t", "success", 1.0), "final": True},
                                      {**job.meta(), **written}], [], 0)
    assert summary["overall"]["success_rate"] == 1.0 and summary["overall"]["runs"] == 1
    assert summary["statuses"] == {"success": 1, "evaluator_error": 1}
    assert summary["evaluator_errors"][0]["task_id"] == OS_TASK
    assert "evaluator errors (not in the scores):" in format_summary(summary)


class _ScriptedAgent(Agent):
    """Gives one fixed list of actions, then DONE."""

    def __init__(self, actions):
        super().__init__()
        self.actions = list(actions)

    def reset(self, task, env=None):
        pass

    def predict(self, instruction, obs):
        out, self.actions = (self.actions, ["DONE"]) if self.actions else (["DONE"], [])
        return "", out


class _RecordingEnv(_HostOnlyEnv):
    """Records which path each action took: env.step or the solution-command method."""

    def __init__(self, cache_dir):
        super().__init__(cache_dir)
        self.steps, self.commands = [], []

    def step(self, action):
        self.steps.append(action)
        if action == "DONE":
            return super().step(action)
        return {}, 0.0, False, False, {"error": "invalid action"} if isinstance(action, dict) else {}

    def run_command(self, command, shell=False, timeout_s=None):
        self.commands.append(command)
        failed = "false" in command
        return {"returncode": 1 if failed else 0, "output": "", "error": "no" if failed else "", "timed_out": False}


def _shell_solution_task(*commands):
    """The sample os task, tagged cli, with a reference solution of these shell steps."""
    from desktop_env.tasks import load_task

    task = load_task(SAMPLES / "examples/os" / OS_TASK / f"{OS_TASK}.json")
    task.tags = ["cli"]
    task.extra["solution"] = [{"command": c, "shell": True} for c in commands]
    return task


@pytest.mark.parametrize("oracle", [False, True])
def test_only_the_oracle_reaches_a_shell(tmp_path, oracle):
    """Every agent action goes through env.step; a shell step goes to run_command only when the oracle
    replays the task's solution, so agents have no shell action. traj.jsonl records the oracle's shell
    step as {"command", "shell"} with its exit status."""
    from desktop_env.agents.simple import OracleAgent
    from desktop_env.harness.episode import run_episode

    task = _shell_solution_task("touch /tmp/x")
    env = _RecordingEnv(tmp_path / "cache")
    agent = OracleAgent() if oracle else _ScriptedAgent([{"command": "touch /tmp/x", "shell": True}])
    args = parse_args(["--max_steps", "5"])
    folder = tmp_path / "episode"
    folder.mkdir()
    run_episode(env, agent, task, args, folder, deadline=float("inf"))
    first = json.loads((folder / "traj.jsonl").read_text().splitlines()[0])
    assert first["action"] == {"command": "touch /tmp/x", "shell": True}
    assert first["action_struct"]["type"] == "COMMAND"
    if oracle:
        assert env.commands == ["touch /tmp/x"] and env.steps == ["DONE"]
        assert first["info"]["command_returncode"] == 0 and first["info"]["command"] == "touch /tmp/x"
    else:
        assert env.commands == [] and env.steps == [{"command": "touch /tmp/x", "shell": True}, "DONE"]
        assert first["info"] == {"error": "invalid action"}


def test_a_failing_shell_step_of_the_oracle_is_a_broken_task_naming_the_item(tmp_path):
    from desktop_env.agents.simple import OracleAgent
    from desktop_env.errors import SolutionStepFailed
    from desktop_env.harness.episode import run_episode

    task = _shell_solution_task("true", "false")
    env = _RecordingEnv(tmp_path / "cache")
    folder = tmp_path / "episode"
    folder.mkdir()
    with pytest.raises(SolutionStepFailed, match=r"field solution\[1\]: .*command 'false' exited with 1; stderr: no"):
        run_episode(env, OracleAgent(), task, parse_args(["--max_steps", "5"]), folder, deadline=float("inf"))
    assert env.commands == ["true", "false"] and env.steps == []
    assert len((folder / "traj.jsonl").read_text().splitlines()) == 2


def test_a_result_folder_of_another_image_is_refused_not_resumed(tmp_path):
    """Results made on one image must not count as done on another: the run stops and says which images and
    what to do, and runs again once pointed at a folder of its own (or the same image)."""
    index = write_index(tmp_path, {"excel": [EXCEL_TASK]})
    results = tmp_path / "results"
    folder = results / "pyautogui/screenshot/noop"
    done = folder / "excel" / EXCEL_TASK
    done.mkdir(parents=True)
    (done / "status.json").write_text(json.dumps(record(EXCEL_TASK, "wrong_result", 0.0, domain="excel")))
    (folder / "manifest.json").write_text(json.dumps({"model": "noop", "image": {"path_to_vm": "/images/old.qcow2"}}))

    def run(path_to_vm):
        return subprocess.run([sys.executable, "run.py", "--model", "noop", "--provider_name", "libvirt",
                               "--path_to_vm", path_to_vm, "--test_all_meta_path", str(index),
                               "--test_config_base_dir", str(SAMPLES), "--result_dir", str(results)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)

    out = run("/images/new.qcow2")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "'/images/old.qcow2'" in out.stderr and "'/images/new.qcow2'" in out.stderr and "--result_dir" in out.stderr
    assert not (folder / "summary.json").exists()
    same = run("/images/old.qcow2")
    assert same.returncode == 0 and "1 tasks: 1 already done, 0 to run" in same.stdout, same.stdout + same.stderr


class _FailingStepEnv(_RecordingEnv):
    """Takes two actions, then fails the third the way a reference solution's broken step does."""

    def step(self, action):
        from desktop_env.errors import SolutionStepFailed

        if len(self.steps) == 2:
            raise SolutionStepFailed("solution[2] gave up")
        return super().step(action)


def test_a_task_error_mid_episode_records_the_steps_taken(tmp_path):
    """status.json counts the steps the trajectory holds, so a report agrees with the folder."""
    task_dir = tmp_path / "suite/evaluation_examples/examples/os" / OS_TASK
    task_dir.mkdir(parents=True)
    (task_dir / f"{OS_TASK}.json").write_text(json.dumps({
        "id": OS_TASK, "instruction": "x", "config": [],
        "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": "b"},
                      "expected": {"type": "rule", "rules": "b"}}}))
    args = args_for(tmp_path, {"os": [OS_TASK]}, "--model", "noop")
    folder = tmp_path / "results/os" / OS_TASK
    job = Job("os", OS_TASK, 1, task_dir / f"{OS_TASK}.json", folder)
    agent = _ScriptedAgent([{"action_type": "WAIT"}, {"action_type": "WAIT"}, {"action_type": "WAIT"}])
    status = run_job(job, args, agent, [_FailingStepEnv(tmp_path / "cache")], None)
    assert status["status"] == "task_error" and "solution[2] gave up" in status["error"]
    lines = [ln for ln in (folder / "traj.jsonl").read_text().splitlines() if ln.strip()]
    assert status["steps"] == len(lines) == 2
    assert json.loads((folder / "status.json").read_text())["steps"] == 2


class _SetupEnv(_HostOnlyEnv):
    """Runs the task's setup steps for real at reset (none of them reaches the VM before failing)."""

    def reset(self, options=None):
        from desktop_env.configs.dispatch import run_config
        from desktop_env.session import SetupContext

        super().reset(options)
        run_config(SetupContext(controller=None, task=self.task, cache_dir=self.cache_dir))
        return {}, {}


def test_a_failed_download_names_the_url_the_task_file_and_the_step(tmp_path):
    url = "http://127.0.0.1:9/data/missing.csv"  # the discard port: nothing listens, the fetch fails at once
    task_dir = tmp_path / "suite/evaluation_examples/examples/os" / OS_TASK
    task_dir.mkdir(parents=True)
    path = task_dir / f"{OS_TASK}.json"
    path.write_text(json.dumps({
        "id": OS_TASK, "instruction": "x",
        "config": [{"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/missing.csv"}]}}],
        "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": "b"},
                      "expected": {"type": "rule", "rules": "b"}}}))
    args = args_for(tmp_path, {"os": [OS_TASK]}, "--model", "noop")
    job = Job("os", OS_TASK, 1, path, tmp_path / "results/os" / OS_TASK)
    from desktop_env.agents.simple import NoopAgent

    status = run_job(job, args, NoopAgent(), [_SetupEnv(tmp_path / "cache")], None)
    assert status["status"] == "task_error" and status["final"], status
    assert status["error"].startswith(f"SetupError: file {path}, field config[0]: download: could not fetch {url}")


@pytest.mark.parametrize("oracle", [False, True])
def test_max_steps_limits_agents_not_the_reference_solution(tmp_path, oracle):
    """--max_steps is an agent's budget: an agent with more actions is stopped there, while the oracle
    replays its whole solution and its DONE (a Calc dialog task's solution has 17 GUI steps)."""
    from desktop_env.agents.simple import OracleAgent
    from desktop_env.harness.episode import run_episode

    commands = [f"touch /tmp/x{i}" for i in range(8)]
    task = _shell_solution_task(*commands)
    env = _RecordingEnv(tmp_path / "cache")
    env.evaluate = lambda: 0.0  # scored when the limit stops the agent
    agent = OracleAgent() if oracle else _ScriptedAgent([{"command": c, "shell": True} for c in commands])
    folder = tmp_path / "episode"
    folder.mkdir()
    out = run_episode(env, agent, task, parse_args(["--max_steps", "5"]), folder, deadline=float("inf"))
    if oracle:
        assert len(env.commands) == 8 and env.steps == ["DONE"] and out["steps"] == 9
    else:
        assert out["steps"] == 5 and env.commands == [] and len(env.steps) == 5


def test_jobs_left_in_the_queue_do_not_hold_the_process_at_exit(tmp_path):
    # workers that die before taking a job leave many jobs (each carries its task) in the queue's pipe;
    # the run must still end, and its process exit, at once
    script = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from desktop_env.harness.config import RunConfig
from desktop_env.harness.jobs import Job
from desktop_env.harness.suite import _run_jobs
from desktop_env.tasks import TaskSpec
task = TaskSpec.from_json({{"id": "t", "instruction": "x" * 20000, "evaluator": {{"func": "infeasible"}}}})
todo = [Job("os", str(i), 1, Path("t.json"), Path({str(tmp_path)!r}) / str(i), task) for i in range(40)]
config = RunConfig(model="no-such-model", result_dir={str(tmp_path / "results")!r})
_run_jobs(config, todo, {{}}, lambda msg, error=False: print(msg, flush=True))
print("run over", flush=True)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "every worker exited before the queue was done" in done.stdout, done.stdout + done.stderr
    assert "run over" in done.stdout and done.returncode == 0, done.stdout + done.stderr


def _offline_suite(tmp_path):
    """A suite of two tasks: one whose init.sh starts Docker (cannot run offline here), one that runs."""
    base = tmp_path / "suite/evaluation_examples"
    ids = {"superset": "0ff10000-0000-4000-8000-000000000001", "os": "0ff10000-0000-4000-8000-000000000002"}
    for app, task_id in ids.items():
        folder = base / "examples" / app / task_id
        folder.mkdir(parents=True)
        script = "docker compose up -d\n" if app == "superset" else "# docker compose up -d: not here\ntouch x\n"
        (folder / "init.sh").write_text("#!/bin/bash\n" + script)
        (folder / f"{task_id}.json").write_text(json.dumps({
            "id": task_id, "instruction": "x", "snapshot": app,
            "config": [{"type": "script_and_execute", "parameters": {
                "src": f"evaluation_examples/examples/{app}/{task_id}/init.sh", "dest": "/home/user/init.sh"}}],
            "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": "b"},
                          "expected": {"type": "rule", "rules": "b"}}}))
    index = base / "test_offline.json"
    index.write_text(json.dumps({app: [task_id] for app, task_id in ids.items()}))
    return base, index, ids


def test_tasks_that_cannot_run_offline_are_left_out_before_any_vm(tmp_path):
    base, index, ids = _offline_suite(tmp_path)
    results = tmp_path / "results"

    def args(*extra):
        return parse_args(["--model", "noop", "--test_all_meta_path", str(index), "--test_config_base_dir", str(base),
                           "--result_dir", str(results), *extra])

    plan = plan_jobs(args())
    assert [j.domain for j in plan.todo] == ["os"] and plan.excluded_offline == {"docker": 1}
    plan = plan_jobs(args("--include_unrunnable"))
    assert [j.domain for j in plan.todo] == ["superset", "os"] and plan.excluded_offline == {}
    done = results / "pyautogui/screenshot/noop/os" / ids["os"]  # the runnable task is done: no VM is needed
    done.mkdir(parents=True)
    (done / "status.json").write_text(json.dumps(record(ids["os"], "success", 1.0, domain="os")))
    out = subprocess.run([sys.executable, "run.py", "--model", "noop", "--test_all_meta_path", str(index),
                          "--test_config_base_dir", str(base), "--result_dir", str(results)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 tasks cannot run offline here and are left out (uses Docker: 1)" in out.stdout
    assert "--include_unrunnable runs them anyway" in out.stdout
    assert "1 tasks: 1 already done, 0 to run" in out.stdout and "1 that cannot run offline left out" in out.stdout
    assert "left out, cannot run offline here (not in the scores): uses Docker: 1" in out.stdout
    summary = json.loads((results / "pyautogui/screenshot/noop/summary.json").read_text())
    assert summary["excluded_offline"] == {"docker": 1} and summary["overall"]["runs"] == 1
    assert summary["overall"]["success_rate"] == 1.0
