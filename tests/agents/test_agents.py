"""Built-in agents: registry, random (seeded, valid), human (noVNC URL, done/fail from a terminal)."""
import io
import os
import pty

import numpy as np
import pytest

from desktop_env.actions import parse_action
from desktop_env.agents import create_agent
from desktop_env.agents.create import builtin_agents
from desktop_env.errors import DesktopEnvError


class Task:
    def __init__(self, task_id):
        self.id, self.instruction = task_id, "do it"


OBS = {"screenshot": np.zeros((1080, 1920, 3), np.uint8)}


def test_registry_names_and_near_misses():
    assert builtin_agents() == ["human", "noop", "oracle", "oracle_without_essential", "random"]
    with pytest.raises(DesktopEnvError, match="did you mean 'random'"):
        create_agent("randon")


def test_random_is_valid_and_seeded_per_task():
    def run(seed, task_id, n=30):
        agent = create_agent("random", action_space="computer_13", seed=seed)
        agent.reset(Task(task_id))
        return [agent.predict("x", OBS)[1][0] for _ in range(n)]

    actions = run(7, "a")
    for action in actions:
        parse_action(action, "computer_13", (1920, 1080))  # raises when invalid
    assert len({a["action_type"] for a in actions}) >= 4
    assert run(7, "a") == actions and run(8, "a") != actions and run(7, "b") != actions
    with pytest.raises(DesktopEnvError, match="--action_space computer_13"):
        create_agent("random", action_space="pyautogui")


def test_human_refuses_without_a_terminal(tmp_path):
    with open(tmp_path / "in", "w+") as f:
        with pytest.raises(DesktopEnvError, match="not a TTY"):
            create_agent("human", stdin_fd=f.fileno())


def test_human_reads_done_and_fail_from_a_terminal():
    master, slave = pty.openpty()
    out = io.StringIO()
    try:
        agent = create_agent("human", stdin_fd=slave, out=out)
        agent.reset(Task("t1"))
        assert "=== task t1\ndo it" in out.getvalue()
        os.write(master, b"maybe\ndone\n")
        assert agent.predict("do it", OBS) == ("done", ["DONE"])
        os.write(master, b"FAIL\n")
        assert agent.predict("do it", OBS) == ("fail", ["FAIL"])
        assert out.getvalue().count("type done, fail or wait") == 3
        agent.close()
    finally:
        os.close(master)
        os.close(slave)


def test_novnc_url_serves_the_viewer(tmp_path):
    import shutil
    import time
    import urllib.request

    from desktop_env.agents.human import NOVNC_WEB, NoVNC

    if not shutil.which("websockify") or not NOVNC_WEB.exists():
        pytest.skip("websockify/novnc not installed (apt-get install websockify novnc)")
    server = NoVNC("127.0.0.1", 5999, tmp_path / "ws.log")
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(server.url, timeout=2) as reply:
                    assert reply.status == 200 and b"noVNC" in reply.read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert "autoconnect=1" in server.url and f":{server.port}/vnc.html" in server.url
    finally:
        server.stop()
    assert server.proc.poll() is not None
