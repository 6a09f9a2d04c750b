"""The spider2v profile's stand-ins for the public data-science suite's VM, run on the host: `conda` (conda.sh's
shell function and the venv-based command) and `gnome-terminal` (on xfce4-terminal)."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

FILES = Path(__file__).resolve().parents[2] / "desktop_env/image/profiles/spider2v/files"
PYTHON = "/usr/bin/python3"  # the guest runs Debian's Python 3.11, as the host's Debian does

pytestmark = pytest.mark.skipif(not os.path.exists(PYTHON), reason="needs Debian's /usr/bin/python3")


@pytest.fixture
def conda_root(tmp_path):
    """An anaconda3 folder laid out as the image lays it out: base is a venv, with conda and conda.sh in it."""
    root = tmp_path / "anaconda3"
    shutil.copytree(FILES / "home/user/anaconda3", root)
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(root)], check=True)
    return root


def bash(root: Path, script: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DESKTOP_ENV_CONDA_ROOT": str(root), "PATH": "/usr/bin:/bin"}
    env.pop("CONDA_PREFIX", None)
    return subprocess.run(["bash", "-c", f"source {root}/etc/profile.d/conda.sh\n{script}"], env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_suite_s_conda_lines_work_on_venvs(conda_root):
    out = bash(conda_root, """
set -e
conda create -n dbt python=3.11 -y > /dev/null
conda activate dbt
echo "python=$(command -v python) env=$CONDA_DEFAULT_ENV prefix=$CONDA_PREFIX"
conda env list
conda deactivate
echo "after=${CONDA_DEFAULT_ENV:-none} python=$(command -v python3)"
conda run -n dbt python -c 'import sys; print("run", sys.prefix)'
conda info --envs | grep -c dbt
conda env remove -n dbt
conda env list | grep -c dbt || true
""")
    assert out.returncode == 0, out.stderr
    envs = conda_root / "envs"
    assert f"python={envs}/dbt/bin/python env=dbt prefix={envs}/dbt" in out.stdout
    assert f"dbt                       *  {envs}/dbt" in out.stdout  # the active one is starred
    assert "after=none python=/usr/bin/python3" in out.stdout
    assert f"run {envs}/dbt" in out.stdout
    assert out.stdout.strip().endswith("0")  # removed


def test_what_cannot_work_offline_says_so(conda_root):
    out = bash(conda_root, "conda activate jupyter; echo rc=$?; conda create -n old python=3.8 -y; echo rc=$?; "
                           "conda activate; echo base=$CONDA_DEFAULT_ENV; conda frobnicate; echo rc=$?")
    assert "EnvironmentNameNotFound: Could not find conda environment: jupyter" in out.stderr
    assert "only Python 3.11 is available offline" in out.stderr and "not 3.8" in out.stderr
    assert "rc=1" in out.stdout and "base=base" in out.stdout
    assert "'frobnicate' is not supported" in out.stderr and "rc=2" in out.stdout


def fake_terminal(tmp_path: Path, sleep_s: int = 0) -> Path:
    """A stand-in xfce4-terminal that writes its arguments, one per line, to args.txt, then stays up sleep_s."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "xfce4-terminal").write_text(f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "
                                         f"{tmp_path}/args.txt.part\nmv {tmp_path}/args.txt.part {tmp_path}/args.txt\n"
                                         f"sleep {sleep_s}\n")
    (fake / "xfce4-terminal").chmod(0o755)
    return fake


def run_wrapper(tmp_path: Path, fake: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """The wrapper run as a setup script runs it: its output piped, read until every writer has closed it."""
    return subprocess.run(["sh", str(FILES / "usr/local/bin/gnome-terminal"), *argv], capture_output=True,
                          text=True, env={**os.environ, "PATH": f"{fake}:/usr/bin:/bin"}, timeout=30)


def written_args(tmp_path: Path) -> list[str]:
    for _ in range(100):
        if (tmp_path / "args.txt").exists():
            return (tmp_path / "args.txt").read_text().splitlines()
        time.sleep(0.1)
    raise AssertionError("the stand-in terminal never started")


@pytest.mark.parametrize("argv,want", [
    (["--maximize", "--working-directory=/home/user/projects/jaffle_shop"],
     ["--maximize", "--working-directory=/home/user/projects/jaffle_shop"]),
    (["--working-directory", "/tmp/x y", "--title", "dbt shell", "--", "bash", "-c", "echo 'hi'; exec bash"],
     ["--working-directory=/tmp/x y", "--title=dbt shell", "-x", "bash", "-c", "echo 'hi'; exec bash"]),
    (["--tab", "-e", "htop"], ["--command=htop"]),
])
def test_gnome_terminal_flags_become_xfce4_terminal_s(tmp_path, argv, want):
    out = run_wrapper(tmp_path, fake_terminal(tmp_path), argv)
    assert out.returncode == 0, out.stderr
    assert written_args(tmp_path) == want


def test_gnome_terminal_returns_at_once_and_leaves_the_terminal_open(tmp_path):
    """The suite's init.sh scripts end on `gnome-terminal ...`: as with GNOME's client, the script must end there
    while the window stays (xfce4-terminal's first instance would hold the script, and its output pipe, open)."""
    started = time.monotonic()
    out = run_wrapper(tmp_path, fake_terminal(tmp_path, sleep_s=20), ["--maximize", "--working-directory=/tmp"])
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started < 10
    assert written_args(tmp_path) == ["--maximize", "--working-directory=/tmp"]
    fake = str(tmp_path / "bin/xfce4-terminal")
    still_up = subprocess.run(["pgrep", "-f", fake], capture_output=True, text=True)
    subprocess.run(["pkill", "-f", fake], check=False)
    assert still_up.returncode == 0, "the terminal did not outlive the wrapper"


def test_gnome_terminal_wait_returns_when_the_terminal_exits(tmp_path):
    started = time.monotonic()
    out = run_wrapper(tmp_path, fake_terminal(tmp_path, sleep_s=3), ["--wait", "--", "true"])
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - started >= 3
    assert written_args(tmp_path) == ["--disable-server", "-x", "true"]
