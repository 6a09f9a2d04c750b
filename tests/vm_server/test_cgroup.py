"""The server's cgroup split (vm_server.cgroup): parsing, its refusal where it cannot split, and the
launch wrapper that moves a launched program into the ``apps`` leaf. The split itself in a real
delegated unit is checked in the guest (tests/vm/test_guest_server.py)."""
import logging
import os
import time

from vm_server import cgroup, procs


def _wait_for(predicate, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_own_cgroup_reads_the_unified_line_only(tmp_path):
    v2 = tmp_path / "v2"
    v2.write_text("0::/system.slice/desktop-env-server.service\n")
    assert cgroup.own_cgroup(str(v2)) == "/system.slice/desktop-env-server.service"
    v1 = tmp_path / "v1"
    v1.write_text("4:memory:/x\n1:cpu:/\n")
    assert cgroup.own_cgroup(str(v1)) is None
    hybrid = tmp_path / "hybrid"
    hybrid.write_text("1:name=systemd:/a\n0::/user.slice/u.scope\n")
    assert cgroup.own_cgroup(str(hybrid)) == "/user.slice/u.scope"
    assert cgroup.own_cgroup(str(tmp_path / "missing")) is None


def test_split_refuses_the_root_and_an_unwritable_cgroup_with_a_warning(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="vm_server.cgroup")
    assert cgroup.split(root=str(tmp_path), cgroup="/") is None
    assert "no cgroup v2 of its own" in caplog.text
    caplog.clear()
    blocker = tmp_path / "system.slice"
    blocker.write_text("a file where the unit's cgroup should be")
    assert cgroup.split(root=str(tmp_path), cgroup="/system.slice/x.service") is None
    assert "cannot split its cgroup" in caplog.text and "Delegate=yes" in caplog.text


def test_launch_argv_keeps_the_program_and_its_arguments():
    argv = cgroup.launch_argv(["prog", "a b", "$HOME"], False, "/leaf")
    assert argv[:2] == ["/bin/sh", "-c"] and argv[3:] == ["/leaf", "prog", "a b", "$HOME"]
    argv = cgroup.launch_argv("echo hi | cat", True, "/leaf")
    assert argv[3:] == ["/leaf", "/bin/sh", "-c", "echo hi | cat"]


def test_a_launched_program_enters_the_leaf_keeps_its_pid_and_arguments(tmp_path):
    leaf = tmp_path / "apps"
    leaf.mkdir()
    (leaf / "cgroup.procs").write_text("")
    out = tmp_path / "args"
    pid = procs.launch(["python3", "-c", "import os, sys; open(sys.argv[1], 'w').write(f'{os.getpid()} {sys.argv[2]}')",
                        str(out), "two words"], cgroup=str(leaf))
    assert _wait_for(lambda: out.exists() and out.read_text())
    assert out.read_text() == f"{pid} two words"
    assert (leaf / "cgroup.procs").read_text().strip() == str(pid)


def test_a_launched_shell_command_enters_the_leaf(tmp_path):
    leaf = tmp_path / "apps"
    leaf.mkdir()
    (leaf / "cgroup.procs").write_text("")
    out = tmp_path / "out"
    pid = procs.launch(f"echo $((6*7)) > {out}", shell=True, cgroup=str(leaf))
    assert _wait_for(lambda: out.exists() and out.read_text().strip() == "42")
    assert (leaf / "cgroup.procs").read_text().strip() == str(pid)


def test_a_leaf_it_cannot_enter_does_not_stop_the_program(tmp_path):
    out = tmp_path / "out"
    procs.launch(["sh", "-c", f"echo started > {out}"], cgroup=str(tmp_path / "no-such-leaf"))
    assert _wait_for(lambda: out.exists() and out.read_text().strip() == "started")
    assert not os.path.exists(tmp_path / "no-such-leaf")


def test_the_setting_is_off_by_default_and_must_be_a_boolean():
    import pytest

    from vm_server.config import ConfigError, ServerConfig

    assert ServerConfig(auth=False).launch_cgroup is False
    assert ServerConfig.from_dict({"auth": False, "launch_cgroup": True}).launch_cgroup is True
    with pytest.raises(ConfigError, match="launch_cgroup must be true or false"):
        ServerConfig.from_dict({"auth": False, "launch_cgroup": "yes"})
