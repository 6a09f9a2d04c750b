"""Chromium setup steps: start it with remote debugging, open/close tabs over CDP, seed its history."""
from __future__ import annotations

import logging
import sqlite3
import tempfile
import time
import urllib.parse
from pathlib import Path

from desktop_env.session import SetupContext, SetupError
from desktop_env.configs.cdp import cdp_base_url, cdp_http, wait_rendered
from desktop_env.errors import GuestServerError
from desktop_env.limits import limit
from desktop_env.registry import SETUP_STEPS

logger = logging.getLogger(__name__)

#: The browser binary in the images (Debian's ``chromium`` package).
CHROMIUM_COMMAND = "chromium"
#: Chromium's profile folder in the VM, relative to the user's home.
CHROMIUM_PROFILE = ".config/chromium/Default"
#: Flags that keep Chromium's first page from stalling under software emulation (TCG) on a loaded
#: host. Seen here: a child process (the network service) gave up after Chromium's 15 s IPC connection
#: timeout ("Terminating current process after 15 seconds with no connection"), the browser restarted
#: it in a loop, and the first page stayed "Loading..." for over 450 s; the GPU process (SwiftShader)
#: took 75 % of a vCPU. With the network service in process, a 300 s connection timeout and no GPU
#: process, the same page loaded in 36-49 s with the host's two cores saturated. Task files that
#: launch Chromium themselves pass the same flags.
CHROMIUM_STABLE_FLAGS = ("--enable-features=NetworkServiceInProcess2", "--ipc-connection-timeout=300", "--disable-gpu")
CDP_POLL_S = 1.0

# Chromium only listens on 127.0.0.1 for remote debugging; this relays listening_port -> debugging_port
# on all interfaces inside the VM so the provider can forward it to the host. Plain python3: the image
# has it (the in-VM server is Python), socat may be absent.
_RELAY_SRC = r"""
import socket, sys, threading
lp, dp = int(sys.argv[1]), int(sys.argv[2])
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", lp)); srv.listen(64)
while True:
    c, _ = srv.accept()
    try:
        u = socket.create_connection(("127.0.0.1", dp))
    except OSError:
        c.close(); continue
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
"""


def _wait_cdp_in_vm(ctx: SetupContext, port: int, step: str) -> None:
    probe = ("import urllib.request,sys\n"
             f"urllib.request.urlopen('http://127.0.0.1:{port}/json/version', timeout=2)\n")
    window_s = limit("setup.chromium")
    deadline = time.monotonic() + window_s
    while True:
        try:
            reply = ctx.controller.execute(["python3", "-c", probe], shell=False, timeout_s=10)
        except GuestServerError as exc:  # the probe itself can outlive its limit under emulation load
            logger.debug("%s: CDP probe did not finish: %s", step, exc)
            reply = {}
        if reply.get("returncode") == 0:
            return
        if time.monotonic() > deadline:
            raise SetupError(f"Chromium's remote-debugging port {port} did not answer within the time limit "
                             f"setup.chromium ({window_s:g} s; awaited GET /json/version in the VM)", step=step)
        time.sleep(CDP_POLL_S)


@SETUP_STEPS.register()
def google_chrome_browser(ctx: SetupContext, debugging_port: int = 1337, listening_port: int = 9222,
                          urls: list | None = None, full_screen: bool = True) -> None:
    """Start Chromium in the VM with remote debugging and open ``urls``, maximized (``full_screen``,
    default true; false leaves Chromium's own window size, 720x800 on this desktop). The step ends
    when each page has rendered its content (see ``desktop_env.configs.cdp.wait_rendered``).

    CDP is relayed inside the VM from ``listening_port`` (all interfaces) to ``debugging_port``
    (Chromium's loopback listener); the provider forwards ``listening_port`` to the host as
    ``ctx.cdp_port_host``.
    """
    urls = list(urls or [])
    command = [CHROMIUM_COMMAND, f"--remote-debugging-port={int(debugging_port)}", "--no-first-run",
               "--no-default-browser-check", "--password-store=basic", "--disable-features=Translate",
               *CHROMIUM_STABLE_FLAGS]
    if full_screen:
        command.append("--start-maximized")
    ctx.controller.launch(command + urls, shell=False)
    if int(listening_port) != int(debugging_port):
        ctx.controller.launch(["python3", "-c", _RELAY_SRC, str(int(listening_port)), str(int(debugging_port))],
                              shell=False)
    _wait_cdp_in_vm(ctx, int(listening_port), "google_chrome_browser")
    ctx.state["chromium"] = {"debugging_port": int(debugging_port), "listening_port": int(listening_port)}
    logger.info("Chromium started with CDP on VM port %s (relayed from %s), %d url(s)",
                debugging_port, listening_port, len(urls))
    wait_rendered(ctx, urls, "google_chrome_browser")


@SETUP_STEPS.register()
def chrome_open_tabs(ctx: SetupContext, urls_to_open: list) -> None:
    """Open each URL in a new Chromium tab through the DevTools HTTP endpoint (``PUT /json/new``); the
    step ends when each page has rendered its content (see ``desktop_env.configs.cdp.wait_rendered``)."""
    base = cdp_base_url(ctx, "chrome_open_tabs")
    for url in urls_to_open:
        try:
            # a busy guest's Chromium (TCG, a second VM beside it) took over 10 s to answer: the named limit
            cdp_http(f"{base}/json/new?{urllib.parse.quote(url, safe=':/')}", method="PUT",
                     timeout_s=limit("setup.cdp_connect"))
        except OSError as exc:
            raise SetupError(f"could not open {url} over CDP at {base}: {exc}", step="chrome_open_tabs") from exc
    wait_rendered(ctx, urls_to_open, "chrome_open_tabs")


@SETUP_STEPS.register()
def chrome_close_tabs(ctx: SetupContext, urls_to_close: list) -> None:
    """Close every Chromium tab whose URL starts with one of ``urls_to_close``."""
    base = cdp_base_url(ctx, "chrome_close_tabs")
    try:
        seconds = limit("setup.cdp_connect")  # as chrome_open_tabs: a busy guest's Chromium outlasts urllib's 10 s
        targets = cdp_http(f"{base}/json/list", timeout_s=seconds)
        for t in targets:
            if t.get("type") == "page" and any(t.get("url", "").startswith(u) for u in urls_to_close):
                cdp_http(f"{base}/json/close/{t['id']}", timeout_s=seconds)
    except OSError as exc:
        raise SetupError(f"could not close tabs over CDP at {base}: {exc}", step="chrome_close_tabs") from exc


# Chromium stores times as microseconds since 1601-01-01 (UTC).
_WEBKIT_EPOCH_OFFSET_S = 11644473600


def add_history_rows(db_path: Path, history: list[dict], now_s: float | None = None) -> int:
    """Insert visits into a Chromium ``History`` sqlite database (host-side part of update_browse_history).

    Args:
        db_path: the History database.
        history: ``[{"url", "title", "visit_time_from_now_in_seconds"}]``.
        now_s: the reference time (default: now).

    Returns:
        how many visits were added.
    """
    now_s = time.time() if now_s is None else now_s
    con = sqlite3.connect(db_path)
    try:
        for item in history:
            t = int((now_s - float(item.get("visit_time_from_now_in_seconds", 0)) + _WEBKIT_EPOCH_OFFSET_S) * 1e6)
            cur = con.execute("SELECT id, visit_count FROM urls WHERE url = ?", (item["url"],))
            row = cur.fetchone()
            if row is None:
                cur = con.execute("INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
                                  "VALUES (?, ?, 1, 0, ?, 0)", (item["url"], item.get("title", ""), t))
                url_id = cur.lastrowid
            else:
                url_id = row[0]
                con.execute("UPDATE urls SET visit_count = ?, last_visit_time = MAX(last_visit_time, ?) WHERE id = ?",
                            (row[1] + 1, t, url_id))
            con.execute("INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
                        "VALUES (?, ?, 0, 805306368, 0, 0)", (url_id, t))
        con.commit()
    finally:
        con.close()
    return len(history)


@SETUP_STEPS.register()
def update_browse_history(ctx: SetupContext, history: list) -> None:
    """Add visits to Chromium's history in the VM (Chromium must have run once and be closed).

    Fetches the profile's ``History`` database, inserts the visits on the host and puts it back.
    """
    step = "update_browse_history"
    home = (ctx.controller.execute("echo $HOME", shell=True).get("output") or "").strip() or "/root"
    vm_db = f"{home}/{CHROMIUM_PROFILE}/History"
    try:
        data = ctx.controller.get_file(vm_db)
    except Exception as exc:  # the controller's error type for a missing file
        raise SetupError(f"Chromium has no History database at {vm_db}: start Chromium once "
                         f"(google_chrome_browser) and close it before this step ({exc})", step=step) from exc
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "History"
        local.write_bytes(data)
        add_history_rows(local, history)
        ctx.controller.upload_file(local.read_bytes(), vm_db)
