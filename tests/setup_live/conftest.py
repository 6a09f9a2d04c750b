"""Fixtures for setup steps, getters and evaluate() run for real against the in-VM server under Xvfb.

The X session and the server come from ``tests/vm_server`` (its harness and fixtures are
loaded from there, not copied): the server runs on the host with a throwaway HOME, so
"guest" paths are folders under the test's ``tmp_path``. Tasks are written as a small
suite (``evaluation_examples/examples/<app>/<uuid>/<uuid>.json`` plus their files) and
loaded with ``load_task``, so paths resolve the way they do for real task folders.
"""
from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import sys
import threading
from pathlib import Path

import pytest

_VM_SERVER_TESTS = Path(__file__).resolve().parent.parent / "vm_server"
if str(_VM_SERVER_TESTS) not in sys.path:  # tests/vm_server/conftest.py imports its harness by this name
    sys.path.insert(0, str(_VM_SERVER_TESTS))


def _load_vm_server_fixtures():
    spec = importlib.util.spec_from_file_location("_vm_server_fixtures", _VM_SERVER_TESTS / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_vmsrv = _load_vm_server_fixtures()
# Re-exported fixtures: this folder gets its own X session and server (session scope per conftest).
server_python = _vmsrv.server_python
xsession = _vmsrv.xsession
server = _vmsrv.server
client = _vmsrv.client
apps = _vmsrv.apps

from desktop_env.session import SetupContext  # noqa: E402
from desktop_env.tasks import TaskSpec, load_task  # noqa: E402


@pytest.fixture
def guest(tmp_path) -> Path:
    """A folder standing for the guest's file system (the server on the host can write there)."""
    path = tmp_path / "guest"
    path.mkdir()
    return path


@pytest.fixture
def suite(tmp_path):
    """``suite(app, task_dict, files={name: str | bytes})`` -> the loaded TaskSpec of a task file in a tmp suite."""
    root = tmp_path / "suite"

    def make(app: str, task: dict, files: dict | None = None) -> TaskSpec:
        folder = root / "evaluation_examples" / "examples" / app / task["id"]
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in (files or {}).items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
        path = folder / f"{task['id']}.json"
        path.write_text(json.dumps(task, indent=2))
        spec = load_task(path)
        assert spec.suite_root == root.absolute(), "the suite root should be found from the task file's path"
        return spec

    return make


@pytest.fixture
def context(client, tmp_path):
    """``context(task)`` -> a SetupContext on the live server, caching under ``tmp_path/cache``."""
    def make(task: TaskSpec) -> SetupContext:
        return SetupContext(controller=client, task=task, cache_dir=tmp_path / "cache")
    return make


@pytest.fixture
def http_root(tmp_path):
    """(folder, base URL) of a local HTTP server on 127.0.0.1 serving ``folder``."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
