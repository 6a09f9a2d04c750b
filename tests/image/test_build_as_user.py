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


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_a_build_through_sudo_hands_the_runtime_folder_over_too(monkeypatch, tmp_path):
    """The ready-state boot leases its ports under <cache>/run as root; the user's runs create VM folders and
    port locks there, so the folder must be theirs after the build."""
    from desktop_env.image import builder as builder_module

    nobody = 65534
    monkeypatch.setattr(builder_module, "sudo_caller", lambda: (nobody, nobody))
    builder = ImageBuilder(BuildOptions(profile="base", cache_dir=tmp_path))
    image_dir = tmp_path / "images" / "base-0123"
    image_dir.mkdir(parents=True)
    (tmp_path / "run" / "ports").mkdir(parents=True)
    (tmp_path / "run" / "ports" / "5000.lock").touch()
    builder.log_dir.mkdir(parents=True)
    builder._hand_over_to_sudo_caller(SimpleNamespace(path=image_dir, name="base-0123"))
    for path in (image_dir, tmp_path / "run", tmp_path / "run" / "ports", tmp_path / "run" / "ports" / "5000.lock"):
        assert path.stat().st_uid == nobody, path
