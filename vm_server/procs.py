"""Running commands in the guest without ever hanging on inherited output.

A command's stdout and stderr go to anonymous temporary files, not pipes: a
background process that keeps them open (``sleep 100 &``) cannot block the reply.
Each command runs in its own session, so a timeout kills its whole process group.
"""
from __future__ import annotations

import logging
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

from .cgroup import launch_argv

logger = logging.getLogger(__name__)

#: Output beyond this many bytes per stream is cut (the reply says so).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024

_PYTHON_NAME = re.compile(r"^python(3(\.\d+)?)?$")
_IMPORTS_PYAUTOGUI = re.compile(r"\bimport\s+pyautogui\b|\bfrom\s+pyautogui\s+import\b")


#: prctl(2): PR_CAP_AMBIENT and its PR_CAP_AMBIENT_CLEAR_ALL operation.
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4


def clear_ambient_capabilities() -> bool:
    """Clear this process's ambient capabilities, so that the programs it starts inherit none.

    The image's unit grants the server CAP_SYS_TIME as an ambient capability (for
    ``/setup/set_clock``); the server keeps it in its own effective set, and the agent's
    commands, which it starts, get no capability. Call before any thread starts (capability
    sets are per thread). Returns False where the kernel refuses (not Linux, before 4.3).
    """
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass
class CommandResult:
    """What a finished (or stopped) command left behind."""

    returncode: int
    output: str
    error: str
    timed_out: bool
    duration_s: float


def normalize_command(command, shell: bool):
    """Turn a request's ``command`` into what ``subprocess`` expects.

    A string without ``shell`` is split like a shell would; ``~`` at the start of
    an argument is expanded (old clients rely on both).

    Raises:
        ValueError: for a command of the wrong type, an empty one, or bad quoting.
    """
    if isinstance(command, str):
        if shell:
            if not command.strip():
                raise ValueError("command is empty")
            return command
        command = shlex.split(command)
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        raise ValueError("command must be a string or a list of strings")
    if not command:
        raise ValueError("command is empty")
    return [os.path.expanduser(a) if a.startswith("~") else a for a in command]


def pyautogui_code(command, shell: bool) -> str | None:
    """The code of a ``python -c CODE`` command that imports pyautogui, else None.

    Old clients send every GUI action this way; the server runs such code in its
    persistent executor instead of starting a new interpreter each time.
    """
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            return None
    elif isinstance(command, list) and not shell:
        argv = command
    else:
        return None
    if (len(argv) == 3 and isinstance(argv[2], str) and argv[1] == "-c"
            and _PYTHON_NAME.match(os.path.basename(str(argv[0])))
            and _IMPORTS_PYAUTOGUI.search(argv[2])):
        return argv[2]
    return None


def _read_capped(fh) -> str:
    fh.seek(0)
    data = fh.read(MAX_OUTPUT_BYTES + 1)
    text = data[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_OUTPUT_BYTES:
        text += f"\n[output cut at {MAX_OUTPUT_BYTES} bytes]"
    return text


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group led by ``proc`` (it was started in a new session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:  # group already gone and pid reused is unlikely; fall back
        proc.kill()


def run_command(command, *, shell: bool = False, timeout_s: float, env: dict | None = None,
                cwd: str | None = None, merge_stderr: bool = False) -> CommandResult:
    """Run ``command`` to completion or until ``timeout_s`` passes.

    Args:
        command: as returned by :func:`normalize_command`.
        shell: run through ``/bin/sh -c``.
        timeout_s: after this many seconds the whole process group is killed.
        env: environment for the command.
        cwd: working directory.
        merge_stderr: send stderr into the same file as stdout (interleaved).

    Returns:
        The result; ``timed_out`` is set when the group had to be killed, and the
        output read so far is kept.

    Raises:
        OSError: when the program cannot be started (not found, not executable).
    """
    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, shell=shell, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=out if merge_stderr else err, env=env, cwd=cwd,
                                start_new_session=True)
        timed_out = False
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            logger.warning("command timed out after %.1f s, killing its process group: %s",
                           timeout_s, command)
            kill_group(proc)
            returncode = proc.wait()
        return CommandResult(returncode=returncode, output=_read_capped(out),
                             error="" if merge_stderr else _read_capped(err),
                             timed_out=timed_out, duration_s=time.monotonic() - started)


def launch(command, *, shell: bool = False, env: dict | None = None, cwd: str | None = None,
           cgroup: str | None = None) -> int:
    """Start ``command`` detached (own session, no inherited output) and return its pid.

    A daemon thread reaps it when it exits, so no zombie is left behind. With ``cgroup`` (a leaf
    from :func:`vm_server.cgroup.split`) the program runs in that cgroup, not the server's.

    Raises:
        OSError: when the program cannot be started.
    """
    if cgroup:
        command, shell = launch_argv(command, shell, cgroup), False
    proc = subprocess.Popen(command, shell=shell, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
    threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
    logger.info("launched pid %d: %s", proc.pid, command)
    return proc.pid
