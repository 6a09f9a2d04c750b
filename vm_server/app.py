"""Flask application factory: shared state, bearer-token auth, JSON errors, /health."""
from __future__ import annotations

import hmac
import logging

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException

from . import __version__, display
from .a11y import A11yReader
from .config import ServerConfig
from .errors import ApiError
from .executor import PyExecutor, default_python
from .recording import Recorder

logger = logging.getLogger(__name__)

#: Paths that answer without a token.
PUBLIC_PATHS = frozenset({"/health"})


class ServerState:
    """What the endpoints share: the config, the executor, the AT-SPI reader, the recorder, and the
    cgroup leaf that launched programs go to (``launch_cgroup``, set at start; None: the server's)."""

    def __init__(self, config: ServerConfig, launch_cgroup: str | None = None):
        self.config = config
        self.launch_cgroup = launch_cgroup
        env = config.child_environment()
        self.executor = PyExecutor(config.executor_python or default_python(), env,
                                   before_start=self._wait_for_display)
        self.a11y = A11yReader(call_timeout_s=config.a11y_call_timeout_s)
        self.recorder = Recorder(config.display_name, config.recordings_dir, fps=config.recording_fps,
                                 ffmpeg=config.ffmpeg, env=env, display_wait_s=config.display_wait_s)

    def _wait_for_display(self) -> None:
        with display.connection(self.config.display_name, self.config.display_wait_s):
            pass

    def close(self) -> None:
        """Stop the executor and any recordings."""
        for name, closer in (("recorder", self.recorder.close), ("executor", self.executor.close)):
            try:
                closer()
            except Exception:  # noqa: BLE001 - each teardown step gets its own chance
                logger.exception("error while closing the %s", name)


def _error(status: int, message: str, **extra):
    body = {"status": "error", "message": message, **extra}
    return jsonify(body), status


def create_app(config: ServerConfig, launch_cgroup: str | None = None) -> Flask:
    """Build the Flask app for ``config`` (validated here); programs it launches go to the cgroup
    ``launch_cgroup`` when given (:func:`vm_server.cgroup.split`).

    The app's ``extensions["vm_server"]`` holds the :class:`ServerState`; call its
    ``close()`` when the server stops.
    """
    config.validate()
    app = Flask("vm_server")
    app.config["MAX_CONTENT_LENGTH"] = config.max_upload_bytes
    app.json.sort_keys = False  # keep replies in the order the endpoints build them
    app.extensions["vm_server"] = ServerState(config, launch_cgroup)
    token = (config.token or "").encode("utf-8")

    @app.before_request
    def check_token():
        if not config.auth or request.path in PUBLIC_PATHS:
            return None
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode("utf-8"), token):
            response, status = _error(401, "missing or wrong bearer token: send 'Authorization: Bearer <token>'")
            response.headers["WWW-Authenticate"] = 'Bearer realm="desktop-env"'
            return response, status
        return None

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError):
        if exc.status >= 500:
            logger.warning("%s %s -> %d: %s", request.method, request.path, exc.status, exc.message)
        return jsonify(exc.to_json()), exc.status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return _error(exc.code or 500, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        logger.exception("unhandled error in %s %s", request.method, request.path)
        return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    @app.route("/health", methods=["GET"])
    def health():
        """Liveness without auth: {"status": "ok", "display": bool, "version"}."""
        st = app.extensions["vm_server"]
        problems = [p for p in (display.xlib_problem(),) if p]
        return jsonify(status="ok", display=display.is_available(config.display_name), version=__version__,
                       auth=config.auth, executor_pid=st.executor.pid, problems=problems)

    from . import routes_exec, routes_files, routes_screen

    for module in (routes_exec, routes_files, routes_screen):
        app.register_blueprint(module.bp)
    return app
