"""One flag convention across the commands: underscores shown and accepted, the older spellings still parsed."""
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env import __version__
from desktop_env.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("argv,field,value", [
    (["image", "list", "--cache_dir", "/c"], "cache_dir", Path("/c")),
    (["image", "list", "--cache-dir", "/c"], "cache_dir", Path("/c")),
    (["image", "warm", "--path_to_vm", "data-1"], "image", "data-1"),
    (["image", "warm", "--image", "data-1"], "image", "data-1"),
    (["vm", "start", "--path_to_vm", "data"], "image", "data"),
    (["image", "build", "--keep_old"], "keep_old", True),
    (["image", "build", "--keep-old"], "keep_old", True),
    (["mirror", "x.json", "--out", "o", "--accept_changes"], "accept_changes", True),
    (["mirror", "x.json", "--out", "o", "--accept-changes"], "accept_changes", True),
    (["vm", "stop", "--vm", "base-x"], "name", "base-x"),
    (["vm", "stop", "base-x"], "name", "base-x"),  # the old positional name
    (["vm", "vnc", "--vm", "base-x"], "name", "base-x"),
    (["vm", "status", "base-x"], "name", "base-x"),
])
def test_both_spellings_parse_to_one_option(argv, field, value):
    from desktop_env.cli_flags import merge_positional_name

    parser = build_parser()
    args = parser.parse_args(argv)
    merge_positional_name(args, parser)
    assert getattr(args, field) == value


def test_help_shows_only_the_underscore_spelling():
    for argv in (["image", "build", "--help"], ["image", "warm", "--help"], ["vm", "stop", "--help"],
                 ["vm", "start", "--help"]):
        out = subprocess.run([sys.executable, "-m", "desktop_env", *argv], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "--cache_dir" in out.stdout and "--cache-dir" not in out.stdout
        assert "--image" not in out.stdout and "--keep-old" not in out.stdout and "--allow-internet" not in out.stdout
    start = subprocess.run([sys.executable, "-m", "desktop_env", "vm", "start", "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60).stdout
    assert "--path_to_vm" in start and "--allow_internet" in start


def test_two_names_for_one_vm_are_refused():
    out = subprocess.run([sys.executable, "-m", "desktop_env", "vm", "stop", "a", "--vm", "b"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "two VM names: a and --vm b" in out.stderr


def test_version_of_both_commands():
    for cmd in ([sys.executable, "-m", "desktop_env", "--version"], [sys.executable, "run.py", "--version"]):
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.strip() == f"desktop_env {__version__}", out
