"""Host-side HTTP client of the in-VM server (``vm_server``)."""
from __future__ import annotations

import io
import logging
import os
import time
import uuid
from pathlib import Path
from typing import BinaryIO, Iterator

import requests

from desktop_env.errors import GuestServerError

logger = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S = 10.0
_SLACK_S = 30.0  # added to a server-side time limit to get the HTTP read timeout
_CHUNK = 1024 * 1024


class _MultipartStream:
    """A ``multipart/form-data`` body read piece by piece, with a known length.

    ``requests`` would build a ``files=`` body in memory; this one streams the file
    from disk, so uploads of any size use constant memory.
    """

    def __init__(self, fields: dict[str, str], file_field: str, filename: str, fileobj: BinaryIO,
                 file_size: int):
        boundary = uuid.uuid4().hex
        self.content_type = f"multipart/form-data; boundary={boundary}"
        head = b""
        for name, value in fields.items():
            head += (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f"{value}\r\n").encode("utf-8")
        safe_name = filename.replace('"', "_").replace("\r", "_").replace("\n", "_") or "file"
        head += (f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                 f'filename="{safe_name}"\r\nContent-Type: application/octet-stream\r\n\r\n').encode("utf-8")
        tail = f"\r\n--{boundary}--\r\n".encode("ascii")
        self._parts: list[BinaryIO] = [io.BytesIO(head), fileobj, io.BytesIO(tail)]
        self._length = len(head) + file_size + len(tail)

    def __len__(self) -> int:
        return self._length

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of the body (all that is left when ``size`` < 0)."""
        out = b""
        while self._parts and (size < 0 or len(out) < size):
            want = -1 if size < 0 else size - len(out)
            data = self._parts[0].read(want)
            if not data:
                self._parts.pop(0)
                continue
            out += data
        return out

    def __iter__(self) -> Iterator[bytes]:
        while True:
            chunk = self.read(_CHUNK)
            if not chunk:
                return
            yield chunk


class PythonController:
    """Client for the in-VM server: run commands and code, read the screen, move files.

    Every method raises :class:`~desktop_env.errors.GuestServerError` when the server
    answers with an error status (``status`` and the decoded JSON ``body`` are kept)
    or cannot be reached (``status`` None).

    Args:
        host: address of the server (the VM's forwarded address on the host).
        port: its port.
        token: bearer token; None for a server running with auth off.
        timeout_s: default HTTP read timeout for calls without a server-side limit.
        keep_alive: reuse TCP connections. Off by default: restoring a snapshot rolls the
            guest's TCP state back while QEMU's user-mode network keeps the host side of a
            pooled connection open, so a reused connection would hang after a revert.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 5000, token: str | None = None,
                 timeout_s: float = 60.0, keep_alive: bool = False):
        shown_host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        self.base_url = f"http://{shown_host}:{port}"
        self.timeout_s = timeout_s
        self._session = requests.Session()
        self._session.trust_env = False  # never route guest traffic through a proxy from the environment
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"
        if not keep_alive:
            self._session.headers["Connection"] = "close"

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP session."""
        self._session.close()

    def __enter__(self) -> "PythonController":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PythonController({self.base_url!r})"

    def _request(self, method: str, path: str, *, read_timeout_s: float | None = None,
                 connect_timeout_s: float = _CONNECT_TIMEOUT_S, stream: bool = False, **kwargs) -> requests.Response:
        url = self.base_url + path
        timeout = (connect_timeout_s, read_timeout_s or self.timeout_s)
        try:
            response = self._session.request(method, url, timeout=timeout, stream=stream, **kwargs)
        except requests.RequestException as exc:
            raise GuestServerError(f"{method} {url} failed: {exc}") from exc
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = response.text[:2000]
            finally:
                response.close()
            message = body.get("message") if isinstance(body, dict) else None
            raise GuestServerError(f"{method} {path} failed" + (f": {message}" if message else ""),
                                   response.status_code, body)
        return response

    def _json(self, method: str, path: str, **kwargs):
        response = self._request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise GuestServerError(f"{method} {path}: reply is not JSON", response.status_code,
                                   response.text[:2000]) from exc

    def _timeout_for(self, timeout_s: float | None) -> float:
        return (timeout_s or self.timeout_s) + _SLACK_S

    # -- health -----------------------------------------------------------------------------

    def health(self, timeout_s: float = 10.0) -> dict:
        """``{"status": "ok", "display": bool, "version": str, ...}`` (needs no token).

        Raises:
            GuestServerError: no answer within ``timeout_s`` (connect and read each), or an error reply.
        """
        return self._json("GET", "/health", read_timeout_s=timeout_s, connect_timeout_s=timeout_s)

    def wait_ready(self, timeout_s: float = 120.0, require_display: bool = True) -> dict:
        """Poll ``/health`` until the server answers (and X is up) or ``timeout_s`` passes.

        Returns:
            The last health reply.

        Raises:
            GuestServerError: the deadline passed; the message says what was awaited and
                the last answer or error seen.
        """
        deadline = time.monotonic() + timeout_s
        delay = 0.1
        last: object = "no answer yet"
        while True:
            try:
                reply = self.health()
                if reply.get("status") == "ok" and (reply.get("display") or not require_display):
                    return reply
                last = reply
            except GuestServerError as exc:
                last = exc
            if time.monotonic() + delay > deadline:
                what = "/health to answer with the X display up" if require_display else "/health to answer"
                raise GuestServerError(f"in-VM server at {self.base_url} not ready after {timeout_s:g} s: "
                                       f"waited for {what}; last: {last}")
            time.sleep(delay)
            delay = min(delay * 1.5, 2.0)

    # -- running things ---------------------------------------------------------------------

    def execute(self, command: str | list[str], shell: bool = False, timeout_s: float | None = None) -> dict:
        """Run a command in the guest and wait for it.

        Args:
            command: argv list, or a string (split like a shell would unless ``shell``).
            shell: run through ``/bin/sh -c``.
            timeout_s: server-side limit (the server's default when None); on expiry the
                command's process group is killed and HTTP 504 raises.

        Returns:
            ``{"status", "output", "error", "returncode"}``.
        """
        body = {"command": command, "shell": shell}
        if timeout_s is not None:
            body["timeout"] = timeout_s
        return self._json("POST", "/execute", json=body, read_timeout_s=self._timeout_for(timeout_s or 120))

    def run_pyautogui(self, code: str, timeout_s: float | None = None) -> dict:
        """Run pyautogui code in the server's persistent executor.

        ``pyautogui`` and ``time`` are pre-bound; FAILSAFE is off.

        Returns:
            ``{"status", "output", "error", "returncode", "executor_pid"}``.
        """
        body = {"code": code}
        if timeout_s is not None:
            body["timeout_s"] = timeout_s
        return self._json("POST", "/pyautogui", json=body, read_timeout_s=self._timeout_for(timeout_s))

    def run_python(self, code: str, timeout_s: float | None = None) -> dict:
        """Run Python code in the executor with fresh globals.

        Returns:
            ``{"status", "output", "error", "returncode", ...}``; ``status`` is "error"
            when the code raised.
        """
        body = {"code": code}
        if timeout_s is not None:
            body["timeout"] = timeout_s
        return self._json("POST", "/run_python", json=body, read_timeout_s=self._timeout_for(timeout_s))

    def run_bash_script(self, script: str, timeout_s: float | None = None,
                        working_dir: str | None = None) -> dict:
        """Run a bash script; stdout and stderr come back interleaved in ``output``."""
        body: dict = {"script": script}
        if timeout_s is not None:
            body["timeout"] = timeout_s
        if working_dir is not None:
            body["working_dir"] = working_dir
        return self._json("POST", "/run_bash_script", json=body,
                          read_timeout_s=self._timeout_for(timeout_s or 120))

    def launch(self, command: str | list[str], shell: bool = False) -> dict:
        """Start a program without waiting for it; returns ``{"status", "message", "pid"}``."""
        return self._json("POST", "/setup/launch", json={"command": command, "shell": shell})

    def set_clock(self, epoch: float | None = None) -> dict:
        """Set the guest clock to ``epoch`` (default: the host's ``time.time()``)."""
        return self._json("POST", "/setup/set_clock", json={"epoch": time.time() if epoch is None else epoch})

    # -- observing --------------------------------------------------------------------------

    def screenshot(self) -> bytes:
        """PNG bytes of the screen, with the mouse cursor."""
        return self._request("GET", "/screenshot").content

    def accessibility_tree(self, max_depth: int | None = None, max_nodes: int | None = None,
                           timeout_s: float | None = None, cells: bool = True, web: str | None = None) -> str:
        """The AT-SPI tree as XML (``max_depth``/``max_nodes`` limit its size; ``timeout_s`` is the
        server's time budget for walking it, default its own 20 s: past it the tree so far is returned).
        ``cells=False`` leaves out spreadsheets' cells (which the server reads last, one by one).
        ``web="atspi"`` walks Chromium's pages over AT-SPI too; by default the server reads them over
        DevTools when Chromium has a remote-debugging port (``web="devtools"``)."""
        return self.accessibility_tree_with_stats(max_depth, max_nodes, timeout_s, cells, web)[0]

    def accessibility_tree_with_stats(self, max_depth: int | None = None, max_nodes: int | None = None,
                                      timeout_s: float | None = None, cells: bool = True,
                                      web: str | None = None) -> tuple[str, dict]:
        """:meth:`accessibility_tree` and the server's account of the walk: ``nodes``, ``hidden``,
        ``truncated`` (the limits it hit: ``depth``, ``nodes``, ``time``), ``pages`` (pages read over
        DevTools; absent from servers before it) and ``elapsed_s``."""
        query = {k: v for k, v in (("max_depth", max_depth), ("max_nodes", max_nodes), ("timeout_s", timeout_s),
                                   ("web", web)) if v is not None}
        if not cells:
            query["cells"] = "false"
        reply = self._json("GET", "/accessibility", params=query,
                           read_timeout_s=self._timeout_for(30 + (timeout_s or 0)))
        return reply["AT"], {k: v for k, v in reply.items() if k != "AT"}

    def terminal_output(self) -> str | None:
        """Text of the focused terminal, or None when no terminal is open."""
        return self._json("GET", "/terminal").get("output")

    def screen_size(self) -> tuple[int, int]:
        """(width, height) of the guest screen."""
        reply = self._json("POST", "/screen_size")
        return int(reply["width"]), int(reply["height"])

    def window_size(self, app_class_name: str) -> tuple[int, int] | None:
        """(width, height) of the first window of WM_CLASS ``app_class_name``; None if there is none."""
        try:
            reply = self._json("POST", "/window_size", data={"app_class_name": app_class_name})
        except GuestServerError as exc:
            if exc.status == 404:
                return None
            raise
        return int(reply["width"]), int(reply["height"])

    def cursor_position(self) -> tuple[int, int]:
        """(x, y) of the mouse pointer."""
        reply = self._json("GET", "/cursor_position")
        return int(reply["x"]), int(reply["y"])

    def platform(self) -> str:
        """The guest OS name ("Linux")."""
        return self._request("GET", "/platform").text.strip()

    def desktop_path(self) -> str:
        """The guest user's desktop folder."""
        return self._json("POST", "/desktop_path")["desktop_path"]

    def wallpaper(self) -> bytes | None:
        """The wallpaper image file's bytes, or None when no wallpaper is set."""
        try:
            return self._request("POST", "/wallpaper").content
        except GuestServerError as exc:
            if exc.status == 404:
                return None
            raise

    def list_directory(self, path: str) -> dict:
        """The tree under ``path``: ``{"type": "directory", "name", "children": [...]}``."""
        return self._json("POST", "/list_directory", json={"path": path})["directory_tree"]

    # -- files ------------------------------------------------------------------------------

    def get_file(self, path: str) -> bytes:
        """The bytes of a guest file (in memory; use :meth:`download_file_to` for big files).

        Raises:
            GuestServerError: status 404 when the file does not exist.
        """
        return self._request("POST", "/file", data={"file_path": path}, read_timeout_s=300).content

    def download_file_to(self, path: str, local_path: str | os.PathLike) -> Path:
        """Stream a guest file to ``local_path`` (written beside it, then renamed)."""
        local = Path(local_path)
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f".{local.name}.part-{uuid.uuid4().hex[:8]}")
        response = self._request("POST", "/file", data={"file_path": path}, stream=True, read_timeout_s=300)
        try:
            with open(tmp, "wb") as out:
                for chunk in response.iter_content(_CHUNK):
                    out.write(chunk)
            os.replace(tmp, local)
        except requests.RequestException as exc:
            raise GuestServerError(f"download of {path} was cut off: {exc}") from exc
        finally:
            response.close()
            if tmp.exists():
                tmp.unlink()
        return local

    def upload_file(self, source: str | os.PathLike | bytes, guest_path: str) -> dict:
        """Store ``source`` (a local path or bytes) at ``guest_path``, streamed.

        Missing parent directories in the guest are created.

        Returns:
            ``{"status", "message", "path", "size"}``.
        """
        if "\r" in guest_path or "\n" in guest_path:
            raise ValueError(f"guest path contains a line break: {guest_path!r}")
        if isinstance(source, (bytes, bytearray, memoryview)):
            fileobj: BinaryIO = io.BytesIO(bytes(source))
            size = len(source)
        else:
            fileobj = open(source, "rb")  # noqa: SIM115 - closed below
            size = os.fstat(fileobj.fileno()).st_size
        try:
            body = _MultipartStream({"file_path": guest_path}, "file_data", os.path.basename(guest_path),
                                    fileobj, size)
            return self._json("POST", "/setup/upload", data=body, headers={"Content-Type": body.content_type},
                              read_timeout_s=max(self.timeout_s, 300))
        finally:
            fileobj.close()

    def download_url(self, url: str, path: str, timeout_s: float = 60.0) -> dict:
        """Make the guest fetch ``url`` into ``path`` (``/setup/download_file``)."""
        return self._json("POST", "/setup/download_file", json={"url": url, "path": path, "timeout": timeout_s},
                          read_timeout_s=self._timeout_for(timeout_s * 3))

    # -- desktop set-up ---------------------------------------------------------------------

    def open_file(self, path: str) -> dict:
        """Open a guest file with its default application."""
        return self._json("POST", "/setup/open_file", json={"path": path})

    def activate_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> dict:
        """Raise and focus the first window matching ``window_name`` (404 when none does)."""
        return self._json("POST", "/setup/activate_window",
                          json={"window_name": window_name, "strict": strict, "by_class": by_class})

    def close_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> dict:
        """Close the first window matching ``window_name`` (404 when none does)."""
        return self._json("POST", "/setup/close_window",
                          json={"window_name": window_name, "strict": strict, "by_class": by_class})

    def change_wallpaper(self, path: str) -> dict:
        """Set the wallpaper to the guest image ``path``."""
        return self._json("POST", "/setup/change_wallpaper", json={"path": path})

    # -- recording --------------------------------------------------------------------------

    def start_recording(self) -> str:
        """Start a screen recording; returns its id (several may run at once)."""
        return self._json("POST", "/start_recording")["recording_id"]

    def end_recording(self, dest_path: str | os.PathLike, recording_id: str | None = None) -> Path:
        """Stop a recording and save the mp4 at ``dest_path`` (streamed).

        Args:
            dest_path: where to write the video.
            recording_id: which recording; None stops the most recent one.
        """
        body = {"recording_id": recording_id} if recording_id else {}
        dest = Path(dest_path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        response = self._request("POST", "/end_recording", json=body, stream=True, read_timeout_s=120)
        try:
            with open(dest, "wb") as out:
                for chunk in response.iter_content(_CHUNK):
                    out.write(chunk)
        except requests.RequestException as exc:
            raise GuestServerError(f"download of recording {recording_id or '(latest)'} was cut off: {exc}") from exc
        finally:
            response.close()
        return dest
