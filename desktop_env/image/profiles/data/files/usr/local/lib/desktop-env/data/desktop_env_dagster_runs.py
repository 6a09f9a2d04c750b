"""Dagster runs that start in about a second: a run launcher and the run-worker server it asks.

Dagster's default launcher has the code server start each run in a new Python process, which
imports Dagster, the code location and its libraries before the run begins: about 20 s under
emulation, on every run. The run-worker server imports them once, when it starts, and forks a
ready process per run; that process does what ``dagster api execute_run`` does (the command
Dagster's container launchers run), so the run, its events and its storage are Dagster's own.
The code location's own modules are forgotten after the warm-up import, so every run imports
the project's code afresh from disk (edits count, as they do after a reload).

The instance's dagster.yaml names the launcher::

    run_launcher:
      module: desktop_env_dagster_runs
      class: ForkingRunLauncher
      config:
        socket: /home/user/.dagster/run-workers.sock

and the server runs as ``python -m desktop_env_dagster_runs --socket PATH --code-module MODULE``
in the code location's working directory, with the instance's ``DAGSTER_HOME``. When the server
does not answer, the launcher launches through the code server as Dagster's default launcher
does, and says so in the run's event log and the log.

Protocol: one JSON request per connection on the Unix socket, one JSON reply line:
``{"op": "start", "run_id": ..., "args": <serialized ExecuteRunArgs>}`` -> ``{"pid": N}``;
``{"op": "has", "run_id": ...}`` -> ``{"found": bool}``; ``{"op": "terminate", "run_id": ...}``
-> ``{"found": bool}`` (SIGTERM to the run's process, which Dagster turns into a cancel);
``{"op": "status"}`` -> ``{"pid": N, "forked": [run ids, oldest first], "running": {run_id: pid}}``.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import traceback
from collections import deque

from dagster import Field, StringSource
from dagster._core.launcher.default_run_launcher import DefaultRunLauncher
from dagster._serdes import serialize_value

log = logging.getLogger("desktop_env_dagster_runs")

#: Seconds a launcher waits for the server's reply (a fork takes milliseconds; a loaded host is slow).
REQUEST_TIMEOUT_S = 60.0
#: Run ids the server remembers having forked, for ``status``.
FORKED_KEPT = 200


def request(path: str, message: dict, timeout_s: float = REQUEST_TIMEOUT_S) -> dict:
    """Send one request to the run-worker server at ``path`` and return its reply (OSError if none)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout_s)
        conn.connect(path)
        conn.sendall(json.dumps(message).encode() + b"\n")
        reply = conn.makefile("rb").readline()
    if not reply:
        raise ConnectionError(f"the run-worker server at {path} closed the connection without a reply")
    answer = json.loads(reply)
    if "error" in answer:
        raise RuntimeError(f"the run-worker server at {path}: {answer['error']}")
    return answer


class ForkingRunLauncher(DefaultRunLauncher):
    """Launches each run in a process forked by the run-worker server (falls back to the default launcher)."""

    def __init__(self, socket: str, inst_data=None):
        super().__init__(inst_data=inst_data)
        self._socket = socket

    @classmethod
    def config_type(cls):
        return {"socket": Field(StringSource, description="Unix socket of the run-worker server")}

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(socket=config_value["socket"], inst_data=inst_data)

    def launch_run(self, context) -> None:
        """Ask the server to fork the run's worker; launch through the code server if it does not answer."""
        from dagster._grpc.types import ExecuteRunArgs

        run = context.dagster_run
        if run.job_code_origin is None:
            return super().launch_run(context)
        args = ExecuteRunArgs(job_origin=run.job_code_origin, run_id=run.run_id,
                              instance_ref=self._instance.get_ref())
        try:
            reply = request(self._socket, {"op": "start", "run_id": run.run_id, "args": serialize_value(args)})
        except (OSError, ValueError) as exc:
            log.warning("run %s: the run-worker server at %s did not answer (%s); launching through the "
                        "code server", run.run_id, self._socket, exc)
            self._instance.report_engine_event(
                f"The run-worker server at {self._socket} did not answer ({exc}); the run is launched "
                "through the code server instead.", run, cls=self.__class__)
            return super().launch_run(context)
        self._instance.report_engine_event(
            f"Run worker forked by the run-worker server (pid: {reply['pid']}).", run, cls=self.__class__)
        return None

    def terminate(self, run_id: str) -> bool:
        """Cancel a run: SIGTERM to its forked worker, or through the code server for one launched there."""
        run = self._instance.get_run_by_id(run_id) if self.has_instance else None
        if not run or run.is_finished:
            return False
        try:
            forked = request(self._socket, {"op": "has", "run_id": run_id})["found"]
        except (OSError, ValueError):
            forked = False
        if not forked:
            return super().terminate(run_id)
        self._instance.report_run_canceling(run)
        return bool(request(self._socket, {"op": "terminate", "run_id": run_id})["found"])


def warm_up(code_modules: list[str]) -> None:
    """Import what a run worker imports: Dagster, the instance's storage, each code module's libraries.

    Each code module is imported and then forgotten (its top-level package leaves ``sys.modules``),
    so that its libraries stay loaded while the project's own code is read again by every run.
    """
    import dagster  # noqa: F401  (the import is the point)
    import dagster._cli  # noqa: F401
    import dagster._cli.api  # noqa: F401
    from dagster import DagsterInstance

    if os.environ.get("DAGSTER_HOME"):
        with DagsterInstance.get() as instance:  # loads the storage's modules (SQLAlchemy, Alembic)
            instance.get_runs(limit=1)
    for name in code_modules:
        try:
            importlib.import_module(name)
        except Exception:  # a broken project still gets its runs (which then report the error)
            log.exception("warm-up: importing %s failed", name)
        top = name.split(".")[0]
        for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
            del sys.modules[key]
    gc.collect()
    gc.freeze()  # objects made so far stay out of the children's collections (fewer copied pages)
    if threading.active_count() > 1:
        log.warning("warm-up left %d threads running; forked workers get only the main one",
                    threading.active_count())


def fork_steps_by_default() -> None:
    """Have the multiprocess executor fork each step's process from this ready worker.

    Dagster's multiprocess executor (every job's default) starts each step in a process made with
    ``spawn`` unless the run config names a start method: a new Python that imports Dagster and the
    code location again, minutes per step under emulation on a loaded host. This worker has them
    imported already, so a forked step process starts at once (and runs the code this run
    imported). A start method named in the run config (``spawn``, ``forkserver``) is kept, and so is
    ``spawn`` when the worker has other threads, which a fork would not copy.
    """
    from dagster._core.executor import multiprocess

    executor = multiprocess.MultiprocessExecutor
    if getattr(executor.__init__, "forks_steps", False):
        return
    original = executor.__init__

    def __init__(self, *args, start_method=None, **kwargs):
        if start_method is None:
            threads = len(os.listdir("/proc/self/task"))
            if threads == 1:
                start_method = "fork"
            else:  # a fork copies only the calling thread; another one's locks would stay held
                log.warning("the run's worker has %d threads: its steps are spawned, not forked", threads)
        original(self, *args, start_method=start_method, **kwargs)

    __init__.forks_steps = True
    executor.__init__ = __init__


def _run_worker(payload: str) -> None:
    """In the forked child: execute the run as ``dagster api execute_run PAYLOAD`` would; never returns."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server's handlers are not the run's
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        fork_steps_by_default()
        from dagster._cli import cli

        try:
            cli.main(args=["api", "execute_run", payload], prog_name="dagster")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Server:
    """The run-worker server: forks a warmed-up process per run (see the module's docstring)."""

    def __init__(self, path: str):
        self.path = path
        self.running: dict[str, int] = {}
        self.forked: deque[str] = deque(maxlen=FORKED_KEPT)

    def serve(self) -> None:
        """Listen on the socket until killed."""
        if os.path.exists(self.path):
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old)
        listener.listen(16)
        listener.settimeout(1.0)
        log.info("serving run workers on %s (pid %d)", self.path, os.getpid())
        while True:
            self._reap()
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                self._answer(conn, listener)

    def _answer(self, conn: socket.socket, listener: socket.socket) -> None:
        conn.settimeout(30)
        try:
            message = json.loads(conn.makefile("rb").readline() or b"{}")
            op = message.get("op")
            run_id = message.get("run_id", "")
            if op == "start":
                reply = {"pid": self._fork(message["args"], run_id, conn, listener)}
            elif op == "has":
                reply = {"found": run_id in self.running}
            elif op == "terminate":
                pid = self.running.get(run_id)
                if pid:
                    os.kill(pid, signal.SIGTERM)
                reply = {"found": pid is not None}
            elif op == "status":
                reply = {"pid": os.getpid(), "forked": list(self.forked), "running": dict(self.running)}
            else:
                reply = {"error": f"unknown op {op!r} (start, has, terminate, status)"}
        except (ValueError, KeyError, OSError) as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        try:
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError as exc:
            log.warning("could not reply (%s)", exc)

    def _fork(self, payload: str, run_id: str, conn: socket.socket, listener: socket.socket) -> int:
        pid = os.fork()
        if pid == 0:
            conn.close()
            listener.close()
            _run_worker(payload)
        self.running[run_id] = pid
        self.forked.append(run_id)
        log.info("run %s: forked its worker, pid %d", run_id, pid)
        return pid

    def _reap(self) -> None:
        for run_id, pid in list(self.running.items()):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done:
                del self.running[run_id]
                log.info("run %s: worker %d ended (%s)", run_id, pid, _describe(status))


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def main(argv: list[str] | None = None) -> None:
    """``python -m desktop_env_dagster_runs --socket PATH [--code-module MODULE ...]``."""
    parser = argparse.ArgumentParser(prog="python -m desktop_env_dagster_runs", description=__doc__.split("\n")[0])
    parser.add_argument("--socket", required=True, help="Unix socket to listen on (the launcher's config)")
    parser.add_argument("--code-module", action="append", default=[],
                        help="a code location's module, imported once to load its libraries, then forgotten")
    ns = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    sys.path.insert(0, os.getcwd())  # the code location's working directory, as `dagster code-server` does
    warm_up(ns.code_module)
    Server(ns.socket).serve()


if __name__ == "__main__":
    main()
