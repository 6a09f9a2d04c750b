"""Local HTTP servers speaking vendors' REST shapes, and a task context whose suite holds settings files."""
from __future__ import annotations

import http.server
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import pytest

from desktop_env.session import SetupContext
from desktop_env.tasks import load_task

TID = "c10dc10d-0000-4000-8000-000000000001"


@dataclass
class Request:
    """One request the fake API received."""

    method: str
    path: str
    query: dict
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body or b"null")


@dataclass
class FakeAPI:
    """Routes ``(METHOD, path regex)`` to ``handler(request, match) -> (status, json body | bytes | None)``."""

    routes: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    url: str = ""

    def route(self, method: str, pattern: str):
        def deco(fn: Callable):
            self.routes.append((method, re.compile(pattern + r"/?$"), fn))
            return fn
        return deco

    def dispatch(self, req: Request):
        self.requests.append(req)
        for method, rx, fn in self.routes:
            m = rx.match(req.path)
            if m and method == req.method:
                try:
                    return fn(req, m)
                except Exception as exc:  # a broken fake must fail the test loudly, not hang the client
                    import traceback
                    return 500, {"error": {"code": 500, "message": f"fake API handler failed: {exc!r}",
                                           "traceback": traceback.format_exc()}}
        return 404, {"error": {"code": 404, "message": f"no route for {req.method} {req.path}"}}


def _handler_for(api: FakeAPI):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self):
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            req = Request(self.command, parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()},
                          {k.lower(): v for k, v in self.headers.items()}, body)
            status, payload = api.dispatch(req)
            data = b"" if payload is None else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, *args):
            pass
    return Handler


@pytest.fixture
def fake_api():
    """A :class:`FakeAPI` served on 127.0.0.1 (its ``url`` set) for the test's lifetime."""
    api = FakeAPI()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(api))
    api.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        httpd.shutdown()
        httpd.server_close()


class Controller:
    """Records uploads: the only VM call the cloud steps make (copy_keyfile)."""

    def __init__(self):
        self.uploads: dict[str, bytes] = {}

    def upload_file(self, source, guest_path):
        self.uploads[guest_path] = source if isinstance(source, bytes) else open(source, "rb").read()
        return {"status": "success", "path": guest_path, "size": len(self.uploads[guest_path])}


@pytest.fixture
def cloud_ctx(tmp_path):
    """A SetupContext for a task in a fresh suite under tmp_path; ``ctx.write_settings(rel, obj)`` fills one in."""
    folder = tmp_path / "evaluation_examples" / "examples" / "cloud" / TID
    folder.mkdir(parents=True)
    path = folder / f"{TID}.json"
    path.write_text(json.dumps({"id": TID, "instruction": "x", "config": [], "evaluator": {"func": "infeasible"}}))
    ctx = SetupContext(controller=Controller(), task=load_task(path), cache_dir=tmp_path / "cache")

    def write_settings(rel: str, obj) -> None:
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(obj))
    ctx.write_settings = write_settings
    ctx.root = tmp_path
    return ctx
