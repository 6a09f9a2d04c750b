"""Command line: ``python -m vm_server [--host H] [--port P] [--config FILE] [--no-auth] [--token T]``."""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time

from . import __version__
from .config import ConfigError, ServerConfig

logger = logging.getLogger("vm_server")


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line (values given here override the config file)."""
    parser = argparse.ArgumentParser(prog="python -m vm_server", description="desktop-env in-VM HTTP server")
    parser.add_argument("--config", help="JSON config file (see docs/vm_server.md)")
    parser.add_argument("--host", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, help="port to listen on (default 5000)")
    parser.add_argument("--token", help="bearer token clients must send")
    parser.add_argument("--no-auth", action="store_true", help="accept requests without a token (old clients)")
    parser.add_argument("--display", help="X display (default $DISPLAY, else :0)")
    parser.add_argument("--log-level", help="DEBUG, INFO, WARNING, ...")
    parser.add_argument("--version", action="version", version=f"vm_server {__version__}")
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace) -> ServerConfig:
    """The config file (if any) with the command-line overrides applied.

    Raises:
        ConfigError: the file or the combination of settings is invalid.
    """
    config = ServerConfig.from_file(args.config) if args.config else ServerConfig()
    for key in ("host", "port", "token", "display", "log_level"):
        value = getattr(args, key)
        if value is not None:
            setattr(config, key, value)
    if args.no_auth:
        config.auth = False
    config.validate()
    return config


def warm_up(state, patience_s: float = 600.0) -> None:
    """Prepare in the background while the session comes up (the server may start before X).

    Turns toolkit accessibility on as soon as the session bus answers, so applications
    started from then on join AT-SPI; once X accepts connections too, puts the AT-SPI bus's
    address on the root window (Qt applications need it: A11yReader.publish_bus_address) and
    starts the pyautogui executor, so the first action does not pay for the import.
    """
    from . import display

    deadline = time.monotonic() + patience_s
    a11y_done = published = executor_done = False
    while not (a11y_done and published and executor_done) and time.monotonic() < deadline:
        if not a11y_done:
            a11y_done = state.a11y.enable_toolkit_accessibility()
        x_up = display.is_available(state.config.display_name)
        if a11y_done and not published and x_up:
            published = state.a11y.publish_bus_address(state.config.display_name)
        if not executor_done and x_up:
            state.executor.prestart()
            executor_done = True
        time.sleep(1.0)


def main(argv=None) -> int:
    """Run the server until SIGTERM or Ctrl-C."""
    args = parse_args(argv)
    logging.basicConfig(level=(args.log_level or "INFO").upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args)
    except ConfigError as exc:
        logger.error("%s", exc)
        return 2
    logging.getLogger().setLevel(config.log_level.upper())

    import waitress

    from . import cgroup, display, procs
    from .app import create_app

    if not procs.clear_ambient_capabilities():
        logger.warning("could not clear the ambient capabilities: programs the server starts may inherit them")

    problem = display.xlib_problem()
    if problem:
        logger.error("%s", problem)

    launch_cgroup = cgroup.split() if config.launch_cgroup else None
    app = create_app(config, launch_cgroup)
    state = app.extensions["vm_server"]

    def on_sigterm(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_sigterm)
    threading.Thread(target=warm_up, args=(state,), name="warm-up", daemon=True).start()
    if not config.auth:
        logger.warning("authentication is OFF: anyone who can reach port %d controls this desktop", config.port)
    logger.info("vm_server %s listening on %s:%d (display %s)", __version__, config.host, config.port,
                config.display_name)
    try:
        waitress.serve(app, host=config.host, port=config.port, threads=config.threads,
                       max_request_body_size=config.max_upload_bytes, ident="desktop-env-vm-server",
                       channel_timeout=600)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        logger.info("shutting down")
        state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
