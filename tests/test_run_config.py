"""RunConfig and Job without a VM: a config made in Python runs the same plan as run.py's flags, is checked with
the flags' messages, and a job crosses a process boundary unchanged."""
import dataclasses
import pickle
from pathlib import Path

import pytest

from desktop_env.harness.config import RunConfig, RunConfigError
from desktop_env.harness.jobs import Job, plan_jobs
from desktop_env.harness.options import parse_args

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "evaluation_examples"
SMOKE = EXAMPLES / "test_smoke.json"


def test_a_config_made_in_python_plans_the_jobs_its_flags_plan(tmp_path):
    made = RunConfig(model="noop", test_all_meta_path=SMOKE, test_config_base_dir=EXAMPLES,
                     result_dir=tmp_path / "results", path_to_vm="base", num_envs=2, trials=2)
    parsed = parse_args(["--model", "noop", "--test_all_meta_path", str(SMOKE), "--test_config_base_dir",
                         str(EXAMPLES), "--result_dir", str(tmp_path / "results"), "--path_to_vm", "base",
                         "--num_envs", "2", "--trials", "2"])
    assert isinstance(parsed, RunConfig) and parsed == made
    by_hand, by_flags = plan_jobs(made), plan_jobs(parsed)
    assert by_hand.todo and by_hand.todo == by_flags.todo
    assert {job.trial for job in by_hand.todo} == {1, 2}
    assert all(isinstance(job, Job) and job.task is not None for job in by_hand.todo)
    assert (by_hand.records, by_hand.excluded, by_hand.excluded_offline) == (by_flags.records, by_flags.excluded,
                                                                             by_flags.excluded_offline)


def test_the_defaults_are_run_py_s(tmp_path):
    config = RunConfig(result_dir=tmp_path)
    assert parse_args(["--result_dir", str(tmp_path)]) == config
    assert config.model == "oracle" and config.model_screen_size == (1280, 720) and config.screen_size is None
    assert config.to_json()["result_dir"] == str(tmp_path) and config.to_json()["max_steps"] == 15


@pytest.mark.parametrize("settings,flags,message", [
    ({"num_envs": 0}, ["--num_envs", "0"], "--num_envs must be at least 1"),
    ({"retries": -1}, ["--retries", "-1"], "--retries must be 0 or more"),
    ({"provider_name": "qemuu"}, ["--provider_name", "qemuu"],
     "--provider_name 'qemuu' is not a provider here (known: "),
])
def test_a_bad_setting_gets_the_flag_s_message_either_way(tmp_path, capsys, settings, flags, message):
    with pytest.raises(RunConfigError, match="^" + message.replace("(", r"\(")):
        RunConfig(result_dir=tmp_path, **settings)
    with pytest.raises(SystemExit):
        parse_args([*flags, "--result_dir", str(tmp_path)])
    assert message in capsys.readouterr().err


def test_an_unknown_provider_names_the_close_one(tmp_path):
    with pytest.raises(RunConfigError) as err:
        RunConfig(provider_name="qemuu", result_dir=tmp_path)
    assert "did you mean 'qemu'?" in str(err.value) and "libvirt" in str(err.value)


def test_a_copy_is_checked_too(tmp_path):
    config = RunConfig(result_dir=tmp_path)
    with pytest.raises(RunConfigError, match="--trials must be at least 1"):
        dataclasses.replace(config, trials=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.num_envs = 0  # type: ignore[misc]


def test_time_scale_is_exported_for_the_workers(tmp_path, monkeypatch):
    from desktop_env.limits import SCALE_ENV, scale

    monkeypatch.delenv(SCALE_ENV, raising=False)  # what apply_time_scale exports, conftest's fixture undoes
    RunConfig(result_dir=tmp_path).apply_time_scale()
    assert scale() == 1.0
    RunConfig(result_dir=tmp_path, time_scale=2.5).apply_time_scale()
    assert scale() == 2.5
    with pytest.raises(RunConfigError, match="--time_scale must be above 0"):
        RunConfig(result_dir=tmp_path, time_scale=0)


def test_a_job_and_its_config_cross_a_process_boundary_unchanged(tmp_path):
    config = RunConfig(model="noop", test_all_meta_path=SMOKE, test_config_base_dir=EXAMPLES,
                       result_dir=tmp_path, worker_log=tmp_path / "run.log")
    job = plan_jobs(config).todo[0]
    again = pickle.loads(pickle.dumps(job))
    assert again == job and again.task.id == job.task.id and again.folder == job.folder
    assert again.meta() == job.meta() and again.key == job.key
    assert pickle.loads(pickle.dumps(config)) == config
