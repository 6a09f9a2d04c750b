"""The bench scripts as documented: each one's default invocation parses and plans (``--plan``, no VM), and
bench/warm_reset.py knows the work of every warm state an image profile declares."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.image.recipe import Recipe
from desktop_env.image.states import state_recipes

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))

sys.path.insert(0, str(BENCH))
from _warm_work import NO_WORK, WORK  # noqa: E402


def documented_default(script: Path) -> list[str]:
    """The arguments of the first ``Usage:`` line of the script's docstring, its optional ``[...]`` parts left out."""
    usage = re.search(r"^Usage: python (\S+)(.*)$", script.read_text(), re.M)
    assert usage, f"{script.name} documents no 'Usage: python bench/...' line"
    assert usage.group(1) == f"bench/{script.name}", usage.group(0)
    return re.sub(r"\[[^\]]*\]", " ", usage.group(2)).split()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_documented_default_invocation_plans_without_a_vm(script, tmp_path):
    env = {**os.environ, "DESKTOP_ENV_CACHE": str(tmp_path / "empty-cache"),
           "DESKTOP_ENV_RUNTIME_DIR": str(tmp_path / "runtime")}
    args = documented_default(script)
    done = subprocess.run([sys.executable, str(script), *args, "--plan"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{script.name} {' '.join(args)} --plan: {done.stdout}{done.stderr}"
    assert "not built in this cache" in done.stdout, done.stdout  # it said which image it would use
    assert not list((tmp_path / "empty-cache").glob("images/*")), "a plan must not build anything"


def test_warm_reset_plans_every_state_of_the_data_image_by_default(tmp_path):
    env = {**os.environ, "DESKTOP_ENV_CACHE": str(tmp_path / "empty-cache")}
    done = subprocess.run([sys.executable, str(BENCH / "warm_reset.py"), "--plan"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in state_recipes("data"):
        assert re.search(rf"^  {re.escape(name)}: ", done.stdout, re.M), f"{name} missing from the plan:\n{done.stdout}"


def test_warm_reset_refuses_a_state_the_profile_does_not_declare(tmp_path):
    env = {**os.environ, "DESKTOP_ENV_CACHE": str(tmp_path / "empty-cache")}
    done = subprocess.run([sys.executable, str(BENCH / "warm_reset.py"), "--states", "superset,nope", "--plan"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "nope" in done.stderr and "superset" in done.stderr  # names the bad one and the declared ones


def test_every_declared_warm_state_has_work_or_is_skipped_on_purpose():
    declared = {name for profile in Recipe.available() for name in state_recipes(profile)}
    assert declared, "no profile declares a warm state: the check below would pass on nothing"
    missing = sorted(declared - set(WORK) - set(NO_WORK))
    assert not missing, (f"warm states with no work defined in bench/_warm_work.py: {missing}; add each to WORK, "
                         "or to NO_WORK with the reason it is skipped")
    assert not set(WORK) & set(NO_WORK), "a state is both measured and skipped"
    assert not (set(WORK) | set(NO_WORK)) - declared, "bench/_warm_work.py names states no profile declares"
    assert all(reason.strip() for reason in NO_WORK.values())
