"""A local HTTP server speaking the OpenAI chat-completions and Anthropic messages wire formats with scripted replies."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeModelAPI:
    """Serves ``POST /v1/chat/completions`` (OpenAI shape) and ``POST /v1/messages`` (Anthropic shape).

    ``script`` is a list of replies used in order (the last one repeats): a string is the
    model's text; ``{"status": 429}`` / ``{"status": 500}`` answers that HTTP error (with ``"headers"``
    added to the answer and ``"message"`` as the error's message, when given);
    ``{"raw": "..."}`` sends that body as is with status 200; ``{"content": [blocks], "stop_reason": ...}``
    is an Anthropic message with those content blocks (``tool_use`` ones for computer use);
    ``{"output": [items]}`` is an OpenAI Responses API response with those output items. Every
    request body is kept in ``requests`` (decoded JSON), its path in ``paths`` and its headers in
    ``headers``.
    """

    def __init__(self, script: list, usage: tuple[int, int] = (1234, 56)):
        self.script = list(script)
        self.usage = usage
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with api._lock:
                    api.requests.append(body)
                    api.paths.append(self.path)
                    api.headers.append({k.lower(): v for k, v in self.headers.items()})
                    reply = api.script[min(len(api.requests) - 1, len(api.script) - 1)]
                if isinstance(reply, dict) and "status" in reply:
                    self._send(reply["status"], json.dumps({"error": {"type": "rate_limit_error" if reply["status"] == 429
                                                                       else "api_error",
                                                              "message": reply.get("message", "scripted")}}),
                               reply.get("headers"))
                    return
                if isinstance(reply, dict) and "raw" in reply:
                    self._send(200, reply["raw"])
                    return
                if self.path.endswith("/chat/completions"):
                    out = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": reply}}],
                           "usage": {"prompt_tokens": api.usage[0], "completion_tokens": api.usage[1],
                                     "total_tokens": sum(api.usage)}}
                elif self.path.split("?")[0].endswith("/messages"):
                    blocks = reply["content"] if isinstance(reply, dict) else [{"type": "text", "text": reply}]
                    stop = reply.get("stop_reason", "tool_use") if isinstance(reply, dict) else "end_turn"
                    out = {"id": f"msg_{len(api.requests)}", "type": "message", "role": "assistant",
                           "model": body.get("model"), "content": blocks, "stop_reason": stop,
                           "stop_sequence": None,
                           "usage": {"input_tokens": api.usage[0], "output_tokens": api.usage[1]}}
                elif self.path.endswith("/responses"):
                    items = reply["output"] if isinstance(reply, dict) else [
                        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": reply, "annotations": []}]}]
                    out = {"id": f"resp_{len(api.requests)}", "object": "response", "created_at": 0,
                           "model": body.get("model"), "status": "completed", "output": items,
                           "parallel_tool_calls": True, "tool_choice": "auto", "tools": body.get("tools", []),
                           "usage": {"input_tokens": api.usage[0], "output_tokens": api.usage[1],
                                     "total_tokens": sum(api.usage), "input_tokens_details": {"cached_tokens": 0},
                                     "output_tokens_details": {"reasoning_tokens": 0}}}
                else:
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                    return
                self._send(200, json.dumps(out))

            def _send(self, status, text, headers=None):
                data = text.encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "FakeModelAPI":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

