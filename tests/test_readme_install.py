"""The README's first command, as a new user types it: its install part runs with no ``sudo`` on PATH."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_first_command() -> str:
    """The command of the first ```bash block under "## The two commands" in README.md."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The two commands", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "README.md: no ```bash block under '## The two commands'"
    return " ".join(line.strip() for line in block.group(1).strip().splitlines())


def install_part(command: str) -> list[str]:
    """The part of the command before the image build: it installs the packages."""
    parts = [p.strip() for p in command.split("&&")]
    install = [p for p in parts if "install" in p]
    assert install, f"no install step in the README's command {command!r}"
    return shlex.split(install[0])


def path_without_sudo(tmp_path: Path) -> str:
    """$PATH with every folder that holds ``sudo`` replaced by a copy of links to all but sudo."""
    out = []
    for i, folder in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        if not folder:
            continue
        if not (Path(folder) / "sudo").exists():
            out.append(folder)
            continue
        shadow = tmp_path / f"bin{i}"
        shadow.mkdir()
        for entry in Path(folder).iterdir():
            if entry.name != "sudo":
                (shadow / entry.name).symlink_to(entry)
        out.append(str(shadow))
    return os.pathsep.join(out)


def test_the_readme_command_installs_then_builds_then_runs_without_sudo():
    command = readme_first_command()
    assert "sudo" not in command.split(), f"the README's first command calls sudo: {command!r}"
    assert install_part(command) == ["bash", ".ci/install"]
    assert "image build --profile base" in command and "run.py --model oracle" in command


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="runs the install as root, as CI does")
def test_the_install_part_works_for_root_without_sudo(tmp_path):
    """Root on a box without sudo (containers, cloud images): apt-get and pip run as is."""
    env = {**os.environ, "PATH": path_without_sudo(tmp_path)}
    proc = subprocess.run(install_part(readme_first_command()), cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "== system packages" in proc.stdout and "== python packages" in proc.stdout
    assert "sudo" not in proc.stdout + proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_a_user_without_root_or_sudo_gets_one_message_naming_what_needs_root(tmp_path):
    copy = tmp_path / "checkout"
    (copy / ".ci").mkdir(parents=True)
    for name in ("install", "apt-packages.txt"):
        (copy / ".ci" / name).write_bytes((ROOT / ".ci" / name).read_bytes())
    copy.chmod(0o755)
    tmp_path.chmod(0o755)
    # the PATH without sudo must be readable by nobody: pytest's folders above tmp_path are root's only
    shadow = Path(tempfile.mkdtemp(prefix="no-sudo-"))
    shadow.chmod(0o755)
    try:
        env = {"PATH": path_without_sudo(shadow), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
        proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                               *install_part(readme_first_command())],
                              cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(shadow)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, proc.stderr
    assert "needs root" in errors[0] and "apt-get" in errors[0] and "sudo is not installed" in errors[0]
    assert "== system packages" not in proc.stdout
