"""The persistent pyautogui executor: one long-lived worker process that runs code.

Starting Python and importing pyautogui costs far more than a typical action, so
the server keeps one worker (``executor_worker.py``) with pyautogui imported and
FAILSAFE off, and sends it code over a pipe. Calls are serialized. A call that
runs past its limit gets the worker killed; the next call starts a fresh one.
"""
from __future__ import annotations

import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable

from .errors import ApiError, Busy

logger = logging.getLogger(__name__)

WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "executor_worker.py")
_MAX_OUTPUT_BYTES = 16 * 1024 * 1024


class ExecutorStartError(ApiError):
    """The worker did not come up (pyautogui failed to import, or it died)."""

    status = 500


@dataclass
class ExecResult:
    """Outcome of one executor call."""

    returncode: int
    output: str
    error: str
    timed_out: bool
    crashed: bool
    pid: int


class PyExecutor:
    """Owner of the worker process.

    Args:
        python: interpreter for the worker (must see pyautogui).
        env: the worker's environment (DISPLAY and accessibility variables).
        before_start: called before a worker is spawned; raises when it must not
            start (e.g. ``DisplayUnavailable`` while X is not up).
        start_timeout_s: how long the worker may take to import pyautogui.
    """

    def __init__(self, python: str, env: dict, before_start: Callable[[], None] | None = None,
                 start_timeout_s: float = 60.0):
        self._python = python
        self._env = env
        self._before_start = before_start
        self._start_timeout_s = start_timeout_s
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._buffer = b""
        self._tmpdir = tempfile.mkdtemp(prefix="vm-server-executor-")
        self._log_path = os.path.join(self._tmpdir, "worker.log")
        self._closed = False
        self._calls = 0

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """Pid of the running worker, or None."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def prestart(self) -> None:
        """Start the worker now if it is not running (errors are logged, not raised)."""
        with self._lock:
            try:
                self._ensure_started()
            except ApiError as exc:
                logger.info("executor not started yet: %s", exc.message)

    def close(self) -> None:
        """Stop the worker and remove its scratch files."""
        self._closed = True
        self._kill()
        shutil.rmtree(self._tmpdir, ignore_errors=True)

    def _log_tail(self, limit: int = 4000) -> str:
        try:
            with open(self._log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - limit))
                return fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _ensure_started(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._closed:
            raise ExecutorStartError("the executor is shut down")
        self._proc = None
        if self._before_start is not None:
            self._before_start()
        log = open(self._log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            proc = subprocess.Popen([self._python, "-u", WORKER_SCRIPT], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=log, env=self._env,
                                    start_new_session=True)
        except OSError as exc:
            raise ExecutorStartError(f"cannot start the executor with {self._python}: {exc}") from exc
        finally:
            log.close()
        self._buffer = b""
        hello = self._read_message(proc, time.monotonic() + self._start_timeout_s)
        if not isinstance(hello, dict) or not hello.get("ready"):
            self._kill(proc)
            detail = hello.get("error", "") if isinstance(hello, dict) else ""
            raise ExecutorStartError("the pyautogui executor failed to start: "
                                     + (detail or "no answer from the worker; its log:\n" + self._log_tail()))
        logger.info("pyautogui executor started, pid %d", proc.pid)
        self._proc = proc
        return proc

    def _kill(self, proc: subprocess.Popen | None = None) -> None:
        proc = proc or self._proc
        if proc is None:
            return
        try:
            os.kill(proc.pid, signal.SIGKILL)  # only the worker: programs its code launched stay
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            logger.error("executor worker %d did not die after SIGKILL", proc.pid)
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if proc is self._proc:
            self._proc = None

    # -- protocol ----------------------------------------------------------------------------

    def _read_message(self, proc: subprocess.Popen, deadline: float):
        """Next JSON line from the worker; ``None`` on timeout, ``EOFError`` if it died."""
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("executor worker closed its channel")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def run(self, code: str, mode: str = "python", timeout_s: float = 60.0) -> ExecResult:
        """Run ``code`` in fresh globals in the worker.

        Args:
            code: Python source.
            mode: ``"pyautogui"`` pre-binds ``pyautogui`` and ``time`` in the globals;
                ``"python"`` starts from empty globals.
            timeout_s: limit for waiting for the executor (held by another call) and, counted
                once the worker is up, for running the code: a worker that has to start first
                (after a timeout killed the last one) does not eat into the code's time.

        Returns:
            The result; on timeout the worker has been killed (``timed_out``), and if
            the code killed the worker itself ``crashed`` is set.

        Raises:
            Busy: another call held the executor for the whole ``timeout_s``.
            DisplayUnavailable: X is not up, so pyautogui cannot be imported.
            ExecutorStartError: the worker failed to start.
        """
        deadline = time.monotonic() + timeout_s
        if not self._lock.acquire(timeout=timeout_s):
            raise Busy(f"the executor stayed busy with another call for {timeout_s:g} s")
        try:
            proc = self._ensure_started()
            deadline = time.monotonic() + timeout_s
            pid = proc.pid
            # Fresh files per call: a program the previous code left running may still
            # hold the old ones open and keep writing.
            self._calls += 1
            out_path = os.path.join(self._tmpdir, f"{self._calls}.out")
            err_path = os.path.join(self._tmpdir, f"{self._calls}.err")
            for path in (out_path, err_path):
                open(path, "wb").close()
            request = {"code": code, "mode": mode, "stdout": out_path, "stderr": err_path}
            timed_out = crashed = False
            returncode = -1
            try:
                proc.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
                proc.stdin.flush()
                reply = self._read_message(proc, deadline)
                if reply is None:
                    timed_out = True
                    logger.warning("executor call timed out after %.1f s; killing worker %d", timeout_s, pid)
                    self._kill(proc)
                else:
                    returncode = int(reply.get("returncode", -1))
                    if reply.get("restart"):
                        logger.warning("executor worker %d lost the X display; it will be replaced", pid)
                        self._kill(proc)
            except (EOFError, BrokenPipeError) as exc:
                crashed = True
                logger.warning("executor worker %d died during a call: %s", pid, exc)
                self._kill(proc)
                returncode = proc.returncode if proc.returncode is not None else -1
            result = ExecResult(returncode=returncode, output=_read_text(out_path),
                                error=_read_text(err_path), timed_out=timed_out, crashed=crashed, pid=pid)
            for path in (out_path, err_path):
                os.unlink(path)
            return result
        finally:
            self._lock.release()


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_OUTPUT_BYTES + 1)
    except OSError:
        return ""
    text = data[:_MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")
    if len(data) > _MAX_OUTPUT_BYTES:
        text += f"\n[output cut at {_MAX_OUTPUT_BYTES} bytes]"
    return text


def default_python() -> str:
    """The interpreter for the worker: this one (the venv that has pyautogui)."""
    return sys.executable
