"""``desktop-env mcp``: the desktop, its tasks and their scoring as a Model Context Protocol server.

Built on the official ``mcp`` SDK (``MCPServer``). Over stdio (``desktop-env mcp``) or streamable
HTTP bound to 127.0.0.1 with a bearer token (``desktop-env mcp --http --port 8765``). Tools:

- ``list_tasks`` and ``start_task``: the suite's tasks by id and instruction only (never the
  solution, the evaluator or gold files); starting one resets its environment to the task's start
  state and runs its setup.
- ``screenshot``, ``computer`` (the actions of Anthropic's computer tool, in screen pixels:
  clicks, drag, mouse down/up, move, scroll, key and hold_key in xdotool names, type, wait,
  cursor_position, zoom; each answers with the screenshot after it), ``accessibility_tree``.
- ``evaluate``: run the task's evaluator, return the score and end the task (absent with
  ``--no_evaluate``, for clients that must not see scores).
- ``list_snapshots``, ``save_snapshot`` and ``revert``: the VM's named snapshots (``init_state``
  is the clean desktop).

One server holds up to ``--max_envs`` environments (VMs), each named by the client (``env``
argument, default ``default``) and owned by the client's session: over HTTP they stop when that
session ends (the client closes it); over stdio when the client disconnects; all of them when the
server stops.
"""
from __future__ import annotations

import functools
import hmac
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

DEFAULT_ENV = "default"
STDIO_OWNER = "stdio"
#: Steps an MCP client may take in one task before the env ends it (the env's own limit is per episode).
MCP_MAX_STEPS = 100_000


@dataclass
class Desktop:
    """One environment of the server: its env, the task it runs, and a lock (one call at a time)."""

    env: Any
    task_id: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Desktops:
    """The server's environments by (owner session, name), at most ``max_envs``, and the suite's tasks.

    Args:
        suite: an index file (``test_*.json``; tasks under ``examples/`` beside it).
        max_envs: environments at once over all sessions.
        make_env: builds a ``DesktopEnv`` (``path_to_vm``, cache and other options bound).
    """

    def __init__(self, suite: str | Path, max_envs: int = 2, make_env: Callable[[], Any] | None = None):
        from desktop_env.tasks import load_index, task_file_for

        self.suite = Path(suite).resolve()
        self.max_envs = max_envs
        self.make_env = make_env
        self.paths: dict[str, tuple[str, Path]] = {}
        for domain, ids in load_index(self.suite).items():
            for task_id in ids:
                path = task_file_for(self.suite.parent / "examples", domain, task_id)
                if path is not None:
                    self.paths[task_id] = (domain, path)
        self.desktops: dict[tuple[str, str], Desktop] = {}
        self._lock = threading.Lock()

    def tasks(self, domain: str | None = None) -> list[dict]:
        """``{id, domain, instruction}`` of every task (of ``domain``); nothing else of the task file."""
        from desktop_env.tasks import load_task

        return [{"id": task_id, "domain": d, "instruction": load_task(path).instruction}
                for task_id, (d, path) in self.paths.items() if domain in (None, "", d)]

    def desktop(self, owner: str, name: str, create: bool = True) -> Desktop:
        """The environment ``name`` of session ``owner``; made (its VM booted on first reset) when new.

        Raises:
            DesktopEnvError: ``max_envs`` environments exist already, or (``create`` false) none is named so.
        """
        with self._lock:
            desktop = self.desktops.get((owner, name))
            if desktop is None:
                if not create:
                    raise DesktopEnvError(f"no environment {name!r}: start a task in it first (start_task)")
                if len(self.desktops) >= self.max_envs:
                    raise DesktopEnvError(f"this server holds at most {self.max_envs} environments (--max_envs) and "
                                          f"all are in use: {', '.join(n for _, n in self.desktops)}; reuse one by "
                                          "its name or close a session")
                desktop = self.desktops[(owner, name)] = Desktop(self.make_env())
            return desktop

    def start(self, owner: str, name: str, task_id: str) -> dict:
        """Reset ``name`` to ``task_id``'s start state and run its setup; returns its id and instruction.

        Raises:
            DesktopEnvError: an unknown task id (with close ones), or the reset or setup failed.
        """
        if task_id not in self.paths:
            import difflib

            close = difflib.get_close_matches(task_id, list(self.paths), n=3)
            raise DesktopEnvError(f"no task {task_id!r} in {self.suite.name}"
                                  + (f"; did you mean {', '.join(close)}?" if close else "; see list_tasks"))
        desktop = self.desktop(owner, name)
        with desktop.lock:
            desktop.env.reset(options={"task_config": self.paths[task_id][1]})
            desktop.task_id = task_id
        return {"env": name, "task_id": task_id, "instruction": desktop.env.instruction}

    def close_owner(self, owner: str) -> None:
        """Stop the VMs of one session."""
        with self._lock:
            mine = [(key, d) for key, d in self.desktops.items() if key[0] == owner]
            for key, _ in mine:
                del self.desktops[key]
        for (_, name), desktop in mine:
            log.info("session %s ended: stopping environment %s", owner, name)
            _close(desktop)

    def close_all(self) -> None:
        """Stop every VM."""
        for owner in {key[0] for key in list(self.desktops)}:
            self.close_owner(owner)


def _close(desktop: Desktop) -> None:
    try:
        desktop.env.close()
    except Exception:  # noqa: BLE001 - a VM that fails to stop must not keep the others running
        log.exception("stopping an environment")


def build_server(desktops: Desktops, evaluate: bool = True):
    """The ``MCPServer`` with the desktop's tools (``evaluate`` only when asked)."""
    from desktop_env.agents.computer_use import InvalidToolUse, ToolTranslator
    from desktop_env.agents.parsing import ScreenMapping

    server = MCPServer("desktop-env", instructions=(
        "A Linux desktop in a VM. list_tasks, then start_task(task_id) to reset an environment to the task's start "
        "state; act with computer(...) in screen pixels (each answers with the new screenshot); "
        + ("evaluate() scores the task and ends it." if evaluate else "scoring is not offered by this server.")))

    def owner(ctx: Context) -> str:
        """The client's HTTP session (its ``mcp-session-id``), or the one stdio client."""
        headers = ctx.headers or {}
        return headers.get("mcp-session-id") or STDIO_OWNER

    def png(data: bytes) -> Image:
        return Image(data=data, format="png")

    def tool(fn):
        """Register ``fn`` as a tool; its anticipated failures reach the client as the tool's error text."""
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except DesktopEnvError as exc:
                raise ToolError(str(exc)) from exc
        server.tool()(run)
        return run

    @tool
    def list_tasks(domain: str | None = None) -> list[dict]:
        """The suite's tasks: id, domain (app) and instruction; give ``domain`` for one app's."""
        return desktops.tasks(domain)

    @tool
    def start_task(task_id: str, ctx: Context, env: str = DEFAULT_ENV) -> dict:
        """Reset environment ``env`` to the task's start state and run its setup (a VM boots on first use;
        under emulation this takes minutes). Returns the task's id and instruction."""
        return desktops.start(owner(ctx), env, task_id)

    @tool
    def screenshot(ctx: Context, env: str = DEFAULT_ENV) -> Image:
        """The screen of ``env`` now (PNG, with the mouse cursor)."""
        desktop = desktops.desktop(owner(ctx), env, create=False)
        with desktop.lock:
            return png(desktop.env.screenshot_png())

    @tool
    def computer(action: str, ctx: Context, coordinate: list[int] | None = None, text: str | None = None,
                 start_coordinate: list[int] | None = None, scroll_direction: str | None = None,
                 scroll_amount: int | None = None, duration: float | None = None, region: list[int] | None = None,
                 env: str = DEFAULT_ENV) -> Any:
        """One mouse or keyboard action in ``env``, in screen pixels, answered with the screenshot after it.

        ``action``: left_click, right_click, middle_click, double_click, triple_click (``coordinate``;
        ``text`` names modifier keys held), left_click_drag (``start_coordinate`` to ``coordinate``),
        left_mouse_down, left_mouse_up, mouse_move, scroll (``scroll_direction`` up/down/left/right,
        ``scroll_amount`` clicks, at ``coordinate``), key (``text`` in xdotool names, e.g. ctrl+s, Return),
        hold_key (``text``, ``duration`` s), type (``text``), wait (``duration`` s), screenshot,
        cursor_position (answers X=..,Y=..), zoom (``region`` [x0, y0, x1, y1]: that part of the screen).
        """
        desktop = desktops.desktop(owner(ctx), env, create=False)
        fields = {"action": action, "coordinate": coordinate, "text": text, "start_coordinate": start_coordinate,
                  "scroll_direction": scroll_direction, "scroll_amount": scroll_amount, "duration": duration,
                  "region": region}
        fields = {k: v for k, v in fields.items() if v is not None}
        with desktop.lock:
            screen = tuple(desktop.env.screen)
            translator = ToolTranslator(ScreenMapping(screen, screen))
            try:
                step = translator.action(fields)
            except InvalidToolUse as exc:
                raise DesktopEnvError(str(exc)) from exc
            if action == "cursor_position":
                x, y = desktop.env.controller.cursor_position()
                return f"X={x},Y={y}"
            _, _, _, _, info = desktop.env.step(step)
            if info.get("error"):
                raise DesktopEnvError(f"the action failed in the VM: {info['error']}")
            shot = desktop.env.screenshot_png()
        if action == "zoom":
            import io

            from PIL import Image as PILImage

            buf = io.BytesIO()
            PILImage.open(io.BytesIO(shot)).crop(translator.region(region)).save(buf, format="PNG")
            shot = buf.getvalue()
        return png(shot)

    @tool
    def accessibility_tree(ctx: Context, env: str = DEFAULT_ENV) -> str:
        """The accessibility tree of ``env``'s desktop (AT-SPI, as XML)."""
        desktop = desktops.desktop(owner(ctx), env, create=False)
        with desktop.lock:
            return desktop.env.controller.accessibility_tree() or ""

    if evaluate:
        @tool
        def evaluate(ctx: Context, env: str = DEFAULT_ENV) -> dict:  # noqa: F811 - the tool's name
            """Score the task running in ``env`` with its evaluator (0.0 to 1.0) and end the task; ``reason`` says
            why (``{"kind", "text", "metric"}``: what the grader compared and where the first difference is)."""
            desktop = desktops.desktop(owner(ctx), env, create=False)
            with desktop.lock:
                if desktop.task_id is None:
                    raise DesktopEnvError(f"no task runs in {env!r}: start_task first")
                verdict = desktop.env.evaluate()
                task_id, desktop.task_id = desktop.task_id, None
            reason = getattr(verdict, "reason", None)
            return {"env": env, "task_id": task_id, "score": float(verdict),
                    "reason": reason.to_json() if reason is not None else None}

    @tool
    def list_snapshots(ctx: Context, env: str = DEFAULT_ENV) -> list[str]:
        """The named snapshots of ``env``'s VM (``init_state``: the clean desktop)."""
        desktop = desktops.desktop(owner(ctx), env, create=False)
        with desktop.lock:
            return desktop.env.provider.list_snapshots()

    @tool
    def save_snapshot(name: str, ctx: Context, env: str = DEFAULT_ENV) -> str:
        """Save ``env``'s VM as snapshot ``name`` (to revert to later)."""
        desktop = desktops.desktop(owner(ctx), env, create=False)
        with desktop.lock:
            desktop.env.provider.save_snapshot(name)
        return f"saved {name!r}"

    @tool
    def revert(ctx: Context, snapshot: str = "init_state", env: str = DEFAULT_ENV) -> Image:
        """Revert ``env``'s VM to a named snapshot; answers with the screenshot. A task running there
        continues from that state."""
        desktop = desktops.desktop(owner(ctx), env, create=False)
        with desktop.lock:
            known = desktop.env.provider.list_snapshots()
            if snapshot not in known:
                raise DesktopEnvError(f"no snapshot {snapshot!r} (this VM has: {', '.join(known)})")
            desktop.env.provider.revert_to_snapshot(snapshot)
            return png(desktop.env.screenshot_png())

    return server


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer TOKEN``; a session the client
    ends (``DELETE`` with its ``mcp-session-id``) stops that session's VMs."""

    def __init__(self, app, token: str, on_session_end: Callable[[str], None]):
        self.app, self.token, self.on_session_end = app, token, on_session_end

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            body = b'{"error": "missing or wrong bearer token"}'
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": body})
            return None
        await self.app(scope, receive, send)
        session = headers.get("mcp-session-id")
        if scope.get("method") == "DELETE" and session:
            import anyio.to_thread

            await anyio.to_thread.run_sync(self.on_session_end, session)
        return None


def serve(desktops: Desktops, evaluate: bool = True, http_port: int | None = None, token: str | None = None) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (HTTP on 127.0.0.1);
    every VM is stopped on the way out."""
    server = build_server(desktops, evaluate)
    try:
        if http_port is None:
            server.run("stdio")
            return
        import uvicorn

        app = BearerAuth(server.streamable_http_app(host="127.0.0.1"), token or "", desktops.close_owner)
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=http_port, log_level="warning")).run()
    finally:
        desktops.close_all()
