"""Building an image as a normal user: the build is sent to sudo before anything else is checked, and
the sudo re-run can find root's tools, which live in sbin folders a user's PATH lacks."""
from __future__ import annotations

import os
import subprocess
from types import SimpleNamespace

import pytest

from desktop_env import cli
from desktop_env.errors import PrivilegeError
from desktop_env.image.builder import BuildOptions, ImageBuilder

USER_PATH = "/usr/local/bin:/usr/bin:/bin"  # a normal user's PATH on Debian: no sbin


def test_a_user_is_told_to_use_root_before_the_tools_are_looked_up(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("PATH", USER_PATH)  # mkfs.ext4 is in /usr/sbin: not found from here
    builder = ImageBuilder(BuildOptions(profile="base", cache_dir=tmp_path))
    with pytest.raises(PrivilegeError):
        builder._preflight()


def test_the_sudo_rerun_gets_the_sbin_folders_on_its_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", USER_PATH)
    monkeypatch.setattr(cli.shutil, "which", lambda name: "/usr/bin/sudo" if name == "sudo" else None)
    calls = []
    monkeypatch.setattr(subprocess, "call", lambda argv: calls.append(argv) or 0)
    args = SimpleNamespace(cache_dir=str(tmp_path), argv=["image", "build", "--profile", "base"])
    assert cli._build_through_sudo(args) == 0
    (argv,) = calls
    assert argv[:2] == ["/usr/bin/sudo", "env"] and argv[-4:] == ["image", "build", "--profile", "base"]
    path = next(a for a in argv if a.startswith("PATH=")).split("=", 1)[1].split(os.pathsep)
    assert path[:3] == USER_PATH.split(":") and "/usr/sbin" in path and "/sbin" in path
