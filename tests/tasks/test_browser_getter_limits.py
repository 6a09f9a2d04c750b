"""The tab getters' three outcomes, through the evaluator's dispatch (``run_getter``) against local endpoints:
Chromium answering (its tabs), no Chromium (refused: None, the agent's outcome, scored 0), and a Chromium
that takes the connection but does not answer within ``evaluator.cdp`` (a busy guest: not scored, never a 0).
The same getters against a real Chromium run in tests/setup_live/test_chrome_getters_live.py."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import desktop_env.evaluators.getters.chrome_pages  # noqa: F401 - registers open_tabs_info
from desktop_env.errors import EvaluatorError
from desktop_env.evaluators.evaluator import run_getter
from desktop_env.limits import SCALE_ENV
from desktop_env.session import SetupContext
from desktop_env.tasks import GetterSpec, load_task

TARGETS = [
    {"id": "w1", "type": "service_worker", "url": "https://a.example/sw.js", "title": ""},
    {"id": "p2", "type": "page", "url": "https://b.example/latest", "title": "Latest"},
    {"id": "p1", "type": "page", "url": "https://a.example/", "title": "First"},
]


def _ctx(tmp_path, port: int) -> SetupContext:
    folder = tmp_path / "evaluation_examples" / "examples" / "chrome" / "t"
    folder.mkdir(parents=True)
    (folder / "t.json").write_text(json.dumps({"id": "t", "instruction": "x", "config": [],
                                               "evaluator": {"func": "infeasible"}}))
    return SetupContext(controller=None, task=load_task(folder / "t.json"), cache_dir=tmp_path / "cache",
                        cdp_port_host=port)


def _get(ctx, getter: str):
    return run_getter(ctx, GetterSpec.from_json({"type": getter}), "result")


@pytest.fixture
def devtools():
    """A DevTools HTTP endpoint listing TARGETS at /json/list."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = json.dumps(TARGETS if self.path == "/json/list" else {}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_port():
    """A port that takes connections (the kernel's backlog) and never answers: a guest too busy to reply."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def closed_port():
    """A port nothing listens on: no Chromium."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_the_active_tab_is_the_first_page_target(tmp_path, devtools):
    ctx = _ctx(tmp_path, devtools)
    assert _get(ctx, "active_tab_info") == {"title": "Latest", "url": "https://b.example/latest"}
    assert _get(ctx, "active_url_from_accessTree") == "https://b.example/latest"
    assert _get(ctx, "open_tabs_info") == [{"title": "Latest", "url": "https://b.example/latest"},
                                           {"title": "First", "url": "https://a.example/"}]


@pytest.mark.parametrize("getter", ["active_tab_info", "active_url_from_accessTree", "open_tabs_info"])
def test_no_chromium_is_no_tab(tmp_path, closed_port, getter):
    assert _get(_ctx(tmp_path, closed_port), getter) is None


@pytest.mark.parametrize("getter", ["active_tab_info", "active_url_from_accessTree", "open_tabs_info"])
def test_a_chromium_that_does_not_answer_in_time_is_not_scored(tmp_path, silent_port, monkeypatch, getter):
    monkeypatch.setenv(SCALE_ENV, "0.01")  # evaluator.cdp: 180 s -> 1.8 s
    with pytest.raises(EvaluatorError) as ei:
        _get(_ctx(tmp_path, silent_port), getter)
    assert "time limit evaluator.cdp (1.8 s" in str(ei.value) and str(silent_port) in str(ei.value)
