"""The flags the public suites' run scripts pass to run.py: taken when they mean something here (--log_level,
--snapshot_name, --verbose_instruction, --client_password), else refused with the flag to use instead."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.harness.episode import task_instruction
from desktop_env.harness.options import parse_args
from desktop_env.tasks import load_task

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = os.environ.get("DESKTOP_ENV_PUBLIC_SUITE_DEV")


def run_py(*argv):
    return subprocess.run([sys.executable, "run.py", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_flags_that_mean_something_here_are_taken(tmp_path):
    args = parse_args(["--log_level", "info", "--snapshot_name", "superset", "--client_password", "password",
                       "--verbose_instruction", "--result_dir", str(tmp_path)])
    assert (args.log_level, args.snapshot_name, args.verbose_instruction) == ("INFO", "superset", True)
    assert parse_args(["--result_dir", str(tmp_path)]).log_level == "WARNING"  # quiet by default


@pytest.mark.parametrize("argv,message", [
    (["--stop_token", "<|end|>"], "--stop_token is not taken: the prompted agent reads its actions from the whole "
                                  "reply; bound the reply with --max_tokens"),
    (["--client_password", "osworld-public-evaluation"], "has the password 'password'"),
    (["--snapshot_name", "libreoffice_calc"], "--snapshot_name 'libreoffice_calc' is no snapshot of the images "
                                              "here (init_state, or a warm state: airflow"),
    (["--log_level", "loud"], "invalid choice: 'LOUD'"),
])
def test_the_others_are_refused_with_what_to_use(tmp_path, argv, message):
    out = run_py(*argv, "--result_dir", str(tmp_path / "r"))
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert not (tmp_path / "r").exists()


def test_the_console_shows_warnings_while_a_task_log_keeps_info(tmp_path):
    code = f"""
import logging
from desktop_env.harness.workers import configure_logging
configure_logging("WARNING")
task_log = logging.FileHandler({str(tmp_path / 'runtime.log')!r})
task_log.setLevel(logging.getLogger().level)
logging.getLogger().addHandler(task_log)
logging.getLogger("x").info("an info line")
logging.getLogger("x").warning("a warning line")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "a warning line" in out.stderr and "an info line" not in out.stderr
    kept = (tmp_path / "runtime.log").read_text()
    assert "an info line" in kept and "a warning line" in kept


def test_verbose_instruction_comes_from_beside_the_task_file(tmp_path):
    folder = tmp_path / "evaluation_examples" / "examples" / "os" / "t1"
    folder.mkdir(parents=True)
    task_file = folder / "t1.json"
    task_file.write_text('{"id": "t1", "instruction": "Make it so.", "config": [], '
                         '"evaluator": {"func": "infeasible"}}')
    task = load_task(task_file)
    assert task_instruction(task) == task_instruction(task, verbose=True) == "Make it so."  # none beside it
    (folder / "verbose_instruction.txt").write_text("1. Open it.\n2. Make it so.\n")
    assert task_instruction(task, verbose=True) == "1. Open it.\n2. Make it so."
    assert task_instruction(task) == "Make it so."


@pytest.mark.skipif(not PUBLIC, reason="DESKTOP_ENV_PUBLIC_SUITE_DEV is not set (.ci/run sets it where the public "
                                       "suite's development split is)")
def test_verbose_instruction_of_a_public_abstract_task():
    root = Path(PUBLIC) / "evaluation_examples" / "examples" / "dbt"
    abstract = next(load_task(p) for d in sorted(root.iterdir()) for p in d.glob("*.json")
                    if "abstract" in load_task(p).tags)
    verbose = task_instruction(abstract, verbose=True)
    assert verbose != abstract.instruction and len(verbose) > len(abstract.instruction)
    assert verbose == (Path(abstract.path).parent / "verbose_instruction.txt").read_text().strip()
