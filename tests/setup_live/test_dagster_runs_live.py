"""The data image's Dagster run launcher (desktop_env_dagster_runs) against a real ``dagster dev``.

The instance's dagster.yaml is the image's (the forking launcher, runs handed to it at once) with a test
socket; the run-worker server runs from the image's module file, in the Dagster the data image pins (a
cached venv). Runs are
launched and read through Dagster's GraphQL API, as an agent's clicks in the UI would.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from desktop_env.image.recipe import PROFILES_DIR
from live_procs import dagster_venv_bin, free_port, stop, wait_http

pytestmark = pytest.mark.slow

MODULE_DIR = PROFILES_DIR / "data" / "files" / "usr" / "local" / "lib" / "desktop-env" / "data"
IMAGE_DAGSTER_YAML = (PROFILES_DIR / "data" / "files" / "usr" / "local" / "share" / "desktop-env" / "data" / "home"
                      / ".dagster" / "dagster.yaml")
IMAGE_RUNS_SOCKET = "/home/user/.dagster/run-workers.sock"

DEFS = '''
import json
import os
import time
import dagster as dg

OUT = {out!r}
with open({imports!r}, "a") as log:  # which processes import the code location
    log.write(str(os.getpid()) + chr(10))


def _step_pid(name):
    with open({steps!r}, "a") as log:
        log.write(json.dumps({{"step": name, "pid": os.getpid(), "ppid": os.getppid()}}) + chr(10))


@dg.asset
def total():
    value = 1
    with open(OUT, "w") as f:
        f.write(str(value))
    return value


@dg.asset
def slow():
    time.sleep(600)


@dg.asset
def first():
    _step_pid("first")
    return 1


@dg.asset
def second(first):
    _step_pid("second")
    return first + 1


defs = dg.Definitions(assets=[total, slow, first, second])
'''


class Dagster:
    """A ``dagster dev`` on the project ``shop`` whose runs the forking launcher starts."""

    def __init__(self, work: Path, bin_dir: Path):
        self.work = work
        self.bin = bin_dir
        self.socket = str(work / "runs.sock")
        self.out = work / "total.txt"
        self.imports = work / "imports.log"
        self.steps = work / "steps.log"
        self.defs = work / "shop" / "definitions.py"
        self.server: subprocess.Popen | None = None
        self.url = ""
        self.env = dict(os.environ, DAGSTER_HOME=str(work / "home"), PYTHONPATH=str(MODULE_DIR), DO_NOT_TRACK="1")

    def start_run_server(self) -> None:
        """Start the run-worker server and wait for its socket (it listens once warmed up)."""
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        log = open(self.work / "runs.log", "ab")
        self.server = subprocess.Popen([str(self.bin / "python"), "-m", "desktop_env_dagster_runs", "--socket",
                                        self.socket, "--code-module", "shop.definitions"],
                                       cwd=self.work, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        deadline = time.monotonic() + 120
        while not os.path.exists(self.socket):
            assert self.server.poll() is None, (self.work / "runs.log").read_text()
            assert time.monotonic() < deadline, "the run-worker server did not listen within 120 s"
            time.sleep(0.2)

    def stop_run_server(self) -> None:
        stop(self.server)
        self.server = None

    def gql(self, query: str, variables: dict | None = None) -> dict:
        req = urllib.request.Request(f"{self.url}/graphql", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"query": query, "variables": variables or {}}).encode())
        try:
            with urllib.request.urlopen(req, timeout=60) as reply:
                body = json.load(reply)
        except urllib.error.HTTPError as exc:
            pytest.fail(f"GraphQL answered {exc.code}: {exc.read().decode()[:2000]}")
        assert "errors" not in body, body
        return body["data"]

    def launch(self, *assets: str, run_config: dict | None = None) -> str:
        launched = self.gql("""mutation($p: ExecutionParams!) { launchRun(executionParams: $p) {
          __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }""",
                            {"p": {"selector": {"repositoryLocationName": "shop.definitions",
                                                "repositoryName": "__repository__", "jobName": "__ASSET_JOB",
                                                "assetSelection": [{"path": [a]} for a in assets]},
                                   "runConfigData": run_config or {}}})
        assert launched["launchRun"]["__typename"] == "LaunchRunSuccess", launched
        return launched["launchRun"]["run"]["runId"]

    def run(self, run_id: str) -> dict:
        return self.gql("""query($id: ID!) { runOrError(runId: $id) { ... on Run { status
          eventConnection { events { __typename ... on MessageEvent { message } } } } } }""", {"id": run_id})["runOrError"]

    def wait(self, run_id: str, statuses: tuple[str, ...], timeout_s: float = 180) -> dict:
        deadline = time.monotonic() + timeout_s
        while True:
            run = self.run(run_id)
            if run["status"] in statuses:
                return run
            assert time.monotonic() < deadline, f"run {run_id} still {run['status']} after {timeout_s:.0f} s"
            time.sleep(0.5)

    def reload(self) -> None:
        reply = self.gql("""mutation { reloadRepositoryLocation(repositoryLocationName: "shop.definitions") {
          __typename ... on WorkspaceLocationEntry { loadStatus } } }""")
        assert reply["reloadRepositoryLocation"]["__typename"] == "WorkspaceLocationEntry", reply


def _request(path: str, message: dict) -> dict:
    """The protocol's client, written here (the module imports Dagster, which the test's Python lacks)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(path)
        conn.sendall(json.dumps(message).encode() + b"\n")
        return json.loads(conn.makefile("rb").readline())


@pytest.fixture(scope="module")
def dagster(tmp_path_factory):
    """The project, the run-worker server and ``dagster dev``, started once for the module's tests."""
    work = tmp_path_factory.mktemp("dagster-runs")
    d = Dagster(work, dagster_venv_bin())
    (work / "home").mkdir()
    (work / "shop").mkdir()
    (work / "shop" / "__init__.py").write_text("")
    d.defs.write_text(DEFS.format(out=str(d.out), imports=str(d.imports), steps=str(d.steps)))
    # the image's instance config (launcher, coordinator), with this test's socket
    image_yaml = IMAGE_DAGSTER_YAML.read_text()
    assert IMAGE_RUNS_SOCKET in image_yaml
    (work / "home" / "dagster.yaml").write_text(image_yaml.replace(IMAGE_RUNS_SOCKET, d.socket))
    d.start_run_server()
    port = free_port()
    d.url = f"http://127.0.0.1:{port}"
    log = open(work / "dagster.log", "wb")
    proc = subprocess.Popen([str(d.bin / "dagster"), "dev", "-m", "shop.definitions", "-d", str(work),
                             "-h", "127.0.0.1", "-p", str(port)],
                            cwd=work, env=d.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(f"{d.url}/server_info", 180, proc, "dagster dev")
        yield d
    finally:
        stop(proc)
        if d.server is not None:
            d.stop_run_server()
        log.close()


def _messages(run: dict) -> str:
    return "\n".join(e.get("message") or "" for e in run["eventConnection"]["events"])


def test_a_run_is_forked_by_the_server_and_succeeds(dagster):
    run_id = dagster.launch("total")
    run = dagster.wait(run_id, ("SUCCESS", "FAILURE", "CANCELED"))
    assert run["status"] == "SUCCESS", _messages(run)
    assert run_id in _request(dagster.socket, {"op": "status"})["forked"]
    assert "Run worker forked by the run-worker server" in _messages(run)
    assert dagster.out.read_text() == "1"


def test_an_edited_code_location_runs_its_new_code(dagster):
    # the server imported shop.definitions at its start; each run must read the file as it is now
    dagster.defs.write_text(dagster.defs.read_text().replace("value = 1", "value = 2"))
    dagster.reload()
    run = dagster.wait(dagster.launch("total"), ("SUCCESS", "FAILURE", "CANCELED"))
    assert run["status"] == "SUCCESS", _messages(run)
    assert dagster.out.read_text() == "2"


def test_terminating_a_forked_run_cancels_it(dagster):
    run_id = dagster.launch("slow")
    dagster.wait(run_id, ("STARTED",))
    terminated = dagster.gql("""mutation($id: String!) { terminateRun(runId: $id) { __typename
      ... on PythonError { message } } }""", {"id": run_id})["terminateRun"]
    assert terminated["__typename"] == "TerminateRunSuccess", terminated
    run = dagster.wait(run_id, ("CANCELED", "FAILURE", "SUCCESS"), timeout_s=120)
    assert run["status"] == "CANCELED", _messages(run)
    deadline = time.monotonic() + 60  # the worker ends (and is reaped) a moment after it reports the cancel
    while run_id in _request(dagster.socket, {"op": "status"})["running"]:
        assert time.monotonic() < deadline, "the canceled run's worker was still running after 60 s"
        time.sleep(0.5)


def test_a_worker_that_cannot_load_the_code_fails_its_run(dagster):
    # the code server still holds the working definitions (no reload); the forked worker reads the broken
    # file, and Dagster's own run worker fails the run
    good = dagster.defs.read_text()
    dagster.defs.write_text(good + "\nthis is not python\n")
    try:
        run = dagster.wait(dagster.launch("total"), ("SUCCESS", "FAILURE", "CANCELED"))
    finally:
        dagster.defs.write_text(good)
    assert run["status"] == "FAILURE"
    assert "Could not load job definition" in _messages(run)


def test_without_the_server_runs_go_through_the_code_server(dagster):
    dagster.stop_run_server()
    try:
        dagster.out.unlink()
        run = dagster.wait(dagster.launch("total"), ("SUCCESS", "FAILURE", "CANCELED"))
        assert run["status"] == "SUCCESS", _messages(run)
        assert "did not answer" in _messages(run)
        assert dagster.out.exists()
    finally:
        dagster.start_run_server()


def _step_runs(dagster, run_config: dict | None = None) -> tuple[list[dict], set[int]]:
    """Run the two-step chain; return its steps' processes and every process that imported the code."""
    dagster.steps.unlink(missing_ok=True)
    run = dagster.wait(dagster.launch("first", "second", run_config=run_config), ("SUCCESS", "FAILURE", "CANCELED"))
    assert run["status"] == "SUCCESS", _messages(run)
    steps = [json.loads(line) for line in dagster.steps.read_text().splitlines()]
    assert [s["step"] for s in steps] == ["first", "second"]
    return steps, {int(p) for p in dagster.imports.read_text().split()}


def test_a_runs_steps_are_forked_from_its_worker(dagster):
    # the multiprocess executor would spawn each step: a new Python importing Dagster and the code again
    steps, importers = _step_runs(dagster)
    assert len({s["ppid"] for s in steps}) == 1  # both steps are children of the run's worker
    assert not importers & {s["pid"] for s in steps}, "a step process imported the code location again"


def test_a_start_method_in_the_run_config_is_kept(dagster):
    spawn = {"execution": {"config": {"multiprocess": {"start_method": {"spawn": {}}}}}}
    steps, importers = _step_runs(dagster, spawn)
    assert {s["pid"] for s in steps} <= importers  # spawned steps import the code themselves
