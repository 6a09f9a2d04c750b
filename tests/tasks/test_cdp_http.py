"""Tab steps and tab getters against a local server speaking Chromium's DevTools HTTP protocol (/json/*)."""
from __future__ import annotations

import http.server
import json
import threading
import urllib.parse

import pytest

from desktop_env.configs import browser
from desktop_env.session import SetupContext
from desktop_env.evaluators.getters.browser import get_active_tab_info, get_active_url_from_access_tree
from desktop_env.tasks import SPELLING_FUNC, StepSpec, TaskSpec


class _DevTools(http.server.BaseHTTPRequestHandler):
    """The subset of Chromium's DevTools HTTP endpoint the steps use; pages newest first, as Chromium lists them."""

    pages: list = []
    methods: list = []

    def _reply(self, body, status=200):
        data = (json.dumps(body) if not isinstance(body, str) else body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server API
        self.methods.append(("GET", self.path))
        if self.path == "/json/list":
            return self._reply(self.pages)
        if self.path.startswith("/json/close/"):
            tid = self.path.rsplit("/", 1)[1]
            before = len(self.pages)
            self.pages[:] = [p for p in self.pages if p["id"] != tid]
            return self._reply("Target is closing" if len(self.pages) < before else "No such target id", 200)
        if self.path.startswith("/json/new"):
            return self._reply("Using unsafe HTTP verb GET to invoke /json/new.", 405)
        return self._reply({"error": "not found"}, 404)

    def do_PUT(self):  # noqa: N802
        self.methods.append(("PUT", self.path))
        if self.path.startswith("/json/new?"):
            url = urllib.parse.unquote(self.path.split("?", 1)[1])
            page = {"id": f"T{len(self.methods)}", "type": "page", "url": url, "title": url}
            self.pages.insert(0, page)
            return self._reply(page)
        return self._reply({"error": "not found"}, 404)

    def log_message(self, *args):
        pass


@pytest.fixture
def devtools():
    _DevTools.pages = [{"id": "B", "type": "background_page", "url": "chrome-extension://x", "title": "ext"},
                       {"id": "P0", "type": "page", "url": "about:blank", "title": "blank"}]
    _DevTools.methods = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DevTools)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def ctx(devtools, tmp_path):
    task = TaskSpec(id="t", instruction="x", evaluation=StepSpec("infeasible", {}, SPELLING_FUNC))
    return SetupContext(controller=None, task=task, cache_dir=tmp_path / "c", cdp_port_host=devtools)


def test_open_then_close_tabs(ctx):
    browser.chrome_open_tabs(ctx, urls_to_open=["https://example.org/a?x=1", "https://example.org/b"])
    assert ("PUT", "/json/new?https://example.org/a%3Fx%3D1") in _DevTools.methods  # escaped whole, as Chromium expects
    assert get_active_tab_info(ctx) == {"title": "https://example.org/b", "url": "https://example.org/b"}
    browser.chrome_close_tabs(ctx, urls_to_close=["https://example.org/b"])
    assert [p["url"] for p in _DevTools.pages if p["type"] == "page"] == ["https://example.org/a?x=1", "about:blank"]
    assert get_active_url_from_access_tree(ctx) == "https://example.org/a?x=1"


def test_no_browser_answers_none(ctx, tmp_path):
    ctx.cdp_port_host = 1  # nothing listens there
    assert get_active_tab_info(ctx) is None
