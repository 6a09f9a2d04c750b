"""``desktop-env mcp``: serve the desktop, its tasks and scoring to MCP clients (see desktop_env/mcp_server.py).

    desktop-env mcp --suite evaluation_examples/test_all.json                 stdio (the client starts it)
    desktop-env mcp --http --port 8765                                        streamable HTTP on 127.0.0.1

Over HTTP every request needs ``Authorization: Bearer TOKEN``, the token read from
``$DESKTOP_ENV_MCP_TOKEN`` (or the variable ``--token_env`` names); without it a token is
made and printed on standard error. See docs/agents.md for connecting a client.
"""
from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys

from desktop_env.errors import DesktopEnvError


def cmd_mcp(args) -> int:
    """Run the MCP server until the client disconnects (stdio) or the process is stopped (HTTP)."""
    from desktop_env.mcp_server import MCP_MAX_STEPS, Desktops, serve

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,  # stdout is the protocol's channel over stdio
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.max_envs < 1:
        print("error: --max_envs must be at least 1", file=sys.stderr)
        return 2

    def make_env():
        from desktop_env.envs import DesktopEnv

        return DesktopEnv(path_to_vm=args.path_to_vm, cache_dir=args.cache_dir, require_a11y_tree=False,
                          max_steps=MCP_MAX_STEPS)

    try:
        desktops = Desktops(args.suite, args.max_envs, make_env)
    except DesktopEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    token = None
    if args.http:
        token = os.environ.get(args.token_env)
        if not token:
            token = secrets.token_urlsafe(24)
            print(f"no token in ${args.token_env}: clients must send 'Authorization: Bearer {token}'",
                  file=sys.stderr, flush=True)
        print(f"MCP server on http://127.0.0.1:{args.port}/mcp ({len(desktops.paths)} tasks of {args.suite})",
              file=sys.stderr, flush=True)
    serve(desktops, evaluate=not args.no_evaluate, http_port=args.port if args.http else None, token=token)
    return 0


def register(subparsers) -> None:
    """Add ``mcp`` to the ``desktop-env`` command line."""
    m = subparsers.add_parser("mcp", help="serve the desktop and its tasks over the Model Context Protocol",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    m.add_argument("--suite", default="evaluation_examples/test_all.json", help="index file of the tasks offered")
    m.add_argument("--path_to_vm", default=None, help="image name, profile or folder (default newest base)")
    m.add_argument("--cache_dir", default=None, help="image and runtime cache (default ~/.cache/desktop-env)")
    m.add_argument("--max_envs", type=int, default=2, help="environments (VMs) at once (default 2)")
    m.add_argument("--no-evaluate", action="store_true", help="do not offer the evaluate tool (no scores)")
    m.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio")
    m.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    m.add_argument("--token_env", default="DESKTOP_ENV_MCP_TOKEN",
                   help="environment variable holding the HTTP bearer token (default DESKTOP_ENV_MCP_TOKEN)")
    m.set_defaults(func=cmd_mcp)
