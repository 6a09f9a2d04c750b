"""The ``human`` agent: a person solves the task in a browser (noVNC) and types done or fail."""
from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from desktop_env.agents.base import Agent, TurnInfo, register_agent
from desktop_env.errors import DesktopEnvError, HostToolMissing

log = logging.getLogger(__name__)

NOVNC_WEB = Path("/usr/share/novnc")


class NoVNC:
    """websockify serving noVNC on 127.0.0.1 for a VNC endpoint; ``stop()`` ends it.

    Raises:
        HostToolMissing: websockify or the noVNC files are not installed.
    """

    def __init__(self, vnc_host: str, vnc_port: int, log_path: Path):
        websockify = shutil.which("websockify")
        if not websockify or not NOVNC_WEB.exists():
            raise HostToolMissing("websockify" if not websockify else str(NOVNC_WEB), "websockify novnc",
                                  "show the VM's screen in a browser")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        with open(log_path, "w") as out:
            self.proc = subprocess.Popen([websockify, "--web", str(NOVNC_WEB), f"127.0.0.1:{self.port}",
                                          f"{vnc_host}:{vnc_port}"], stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        self.url = (f"http://127.0.0.1:{self.port}/vnc.html?host=127.0.0.1&port={self.port}"
                    "&autoconnect=1&resize=scale")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@register_agent("human")
class HumanAgent(Agent):
    """Shows the person the task: the noVNC URL of the VM and the instruction, then waits on the terminal.

    The person works in the browser and types ``done`` (the task is complete) or ``fail``
    (it cannot be done); ``wait`` asks again. It talks to the terminal itself (standard
    output and standard input, file descriptor 0), which is its whole purpose.

    Raises:
        DesktopEnvError: standard input is not a terminal.
    """

    def __init__(self, action_space: str = "pyautogui", stdin_fd: int = 0, out=None, **options):
        super().__init__(action_space, **options)
        if not os.isatty(stdin_fd):
            raise DesktopEnvError("--model human reads 'done' or 'fail' from a terminal, but standard input is not "
                                  "a TTY; run run.py from an interactive shell (not piped or in the background)")
        self.stdin_fd = stdin_fd
        self.out = out or sys.stdout
        self.novnc: NoVNC | None = None
        self._log_dir = Path(tempfile.mkdtemp(prefix="desktop-env-human-"))

    def reset(self, task, env=None) -> None:
        self.last_turn = TurnInfo()
        if self.novnc is None and env is not None and getattr(env.provider, "vnc", None) is not None:
            vnc = env.provider.vnc
            self.novnc = NoVNC(vnc.host, vnc.port, self._log_dir / "websockify.log")
        where = self.novnc.url if self.novnc else "(no VNC: the provider has none)"
        self.out.write(f"\n=== task {getattr(task, 'id', '?')}\n{getattr(task, 'instruction', '')}\n"
                       f"Open {where} and solve it there.\n")
        self.out.flush()

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        with open(self.stdin_fd, closefd=False) as stdin:
            while True:
                self.out.write("type done, fail or wait and press Enter: ")
                self.out.flush()
                line = stdin.readline()
                if not line:
                    raise DesktopEnvError("standard input closed while waiting for done/fail")
                answer = line.strip().lower()
                if answer in ("done", "fail", "wait"):
                    return answer, [answer.upper()]

    def close(self) -> None:
        if self.novnc is not None:
            self.novnc.stop()
            self.novnc = None
        shutil.rmtree(self._log_dir, ignore_errors=True)
