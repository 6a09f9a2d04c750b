"""Endpoints that move files in and out of the guest and look at its file system."""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from flask import Blueprint, jsonify, request, send_file

from . import procs
from .errors import ApiError, BadRequest, NotFound
from .webutil import get_number, get_str, guest_path, params, state

logger = logging.getLogger(__name__)

bp = Blueprint("files", __name__)

_CHUNK = 1024 * 1024
_DOWNLOAD_TRIES = 3
_MAX_TREE_ENTRIES = 10000


def _partial_path(dest: str) -> str:
    return f"{dest}.part-{uuid.uuid4().hex[:8]}"


@bp.route("/file", methods=["POST"])
def get_file():
    """Send a guest file: form (or JSON) file_path -> the bytes, streamed; 404 when missing."""
    path = guest_path(get_str(params(), "file_path"))
    if os.path.isdir(path):
        raise BadRequest(f"{path} is a directory, not a file")
    if not os.path.isfile(path):
        raise NotFound(f"file not found: {path}")
    if not os.access(path, os.R_OK):
        raise ApiError(f"permission denied: {path}", 403)
    return send_file(path, as_attachment=True, download_name=os.path.basename(path) or "file",
                     conditional=False, etag=False)


@bp.route("/setup/upload", methods=["POST"])
def upload():
    """Store a file in the guest: multipart file_path + file_data -> {status, message, path, size}.

    The part is spooled to disk by the form parser and copied in chunks; the
    destination appears atomically (written beside it, then renamed), and missing
    parent directories are created.
    """
    file_path = request.form.get("file_path") or request.args.get("file_path")
    if not file_path:
        raise BadRequest("missing field 'file_path' (multipart form: file_path and file_data)")
    storage = request.files.get("file_data")
    if storage is None:
        raise BadRequest("missing file part 'file_data' (multipart form: file_path and file_data)")
    dest = guest_path(file_path)
    if os.path.isdir(dest):
        raise BadRequest(f"{dest} is a directory")
    parent = os.path.dirname(os.path.abspath(dest))
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise ApiError(f"cannot create directory {parent}: {exc}", 500) from None
    tmp = _partial_path(dest)
    try:
        with open(tmp, "wb") as out:
            shutil.copyfileobj(storage.stream, out, _CHUNK)
        os.replace(tmp, dest)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ApiError(f"cannot write {dest}: {exc}", 500) from None
    size = os.path.getsize(dest)
    logger.info("uploaded %d bytes to %s", size, dest)
    return jsonify(status="success", message="File Uploaded", path=dest, size=size)


@bp.route("/setup/download_file", methods=["POST"])
def download_file():
    """Fetch a URL into the guest: {url, path, timeout?} -> {status, message, path, size}.

    Streams to disk (written beside the destination, then renamed); tries three times.
    """
    data = params()
    url = get_str(data, "url")
    dest = guest_path(get_str(data, "path"))
    timeout_s = get_number(data, "timeout", 60.0)
    if not url.lower().startswith(("http://", "https://", "ftp://", "file://")):
        raise BadRequest(f"unsupported URL scheme: {url!r}")
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    error: Exception | None = None
    for attempt in range(1, _DOWNLOAD_TRIES + 1):
        tmp = _partial_path(dest)
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response, open(tmp, "wb") as out:
                shutil.copyfileobj(response, out, _CHUNK)
            os.replace(tmp, dest)
            size = os.path.getsize(dest)
            logger.info("downloaded %s (%d bytes) to %s", url, size, dest)
            return jsonify(status="success", message="File downloaded successfully", path=dest, size=size)
        except urllib.error.HTTPError as exc:
            error = exc
            if 400 <= exc.code < 500:  # the server said no; retrying will not help
                break
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            error = exc
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        logger.warning("download of %s failed (try %d of %d): %s", url, attempt, _DOWNLOAD_TRIES, error)
        if attempt < _DOWNLOAD_TRIES:
            time.sleep(0.5 * attempt)
    status = 404 if isinstance(error, urllib.error.HTTPError) and error.code == 404 else 502
    raise ApiError(f"failed to download {url}: {error}", status)


@bp.route("/list_directory", methods=["POST"])
def list_directory():
    """Directory tree: {path} -> {"directory_tree": {type, name, children}}.

    Entries are sorted by name; at most 10000 are listed (then ``truncated`` is true).
    """
    path = guest_path(get_str(params(), "path"))
    if not os.path.exists(path):
        raise NotFound(f"directory not found: {path}")
    if not os.path.isdir(path):
        raise BadRequest(f"not a directory: {path}")
    budget = [_MAX_TREE_ENTRIES]
    seen: set[tuple[int, int]] = set()

    def walk(directory: str) -> dict:
        node = {"type": "directory", "name": os.path.basename(os.path.normpath(directory)), "children": []}
        try:
            st = os.stat(directory)
            if (st.st_dev, st.st_ino) in seen:  # a symlink loop
                return node
            seen.add((st.st_dev, st.st_ino))
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            return {"error": str(exc)}
        for entry in entries:
            if budget[0] <= 0:
                break
            budget[0] -= 1
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            node["children"].append(walk(entry.path) if is_dir else {"type": "file", "name": entry.name})
        return node

    tree = walk(path)
    return jsonify(directory_tree=tree, truncated=budget[0] <= 0)


@bp.route("/desktop_path", methods=["POST", "GET"])
def desktop_path():
    """{"desktop_path"}: the user's desktop folder (xdg-user-dir DESKTOP, else ~/Desktop)."""
    path = None
    if shutil.which("xdg-user-dir"):
        try:
            out = subprocess.run(["xdg-user-dir", "DESKTOP"], capture_output=True, text=True, timeout=10)
            path = out.stdout.strip() or None
        except (OSError, subprocess.TimeoutExpired):
            path = None
    path = path or str(Path.home() / "Desktop")
    if not os.path.isdir(path):
        raise NotFound(f"desktop folder not found: {path}")
    return jsonify(desktop_path=path)


@bp.route("/setup/open_file", methods=["POST"])
def open_file():
    """Open a file with its default application (xdg-open): {path}; 404 when missing."""
    path = guest_path(get_str(params(), "path"))
    if not os.path.exists(path):
        raise NotFound(f"file not found: {path}")
    try:
        pid = procs.launch(["xdg-open", path], env=state().config.child_environment(),
                           cgroup=state().launch_cgroup)
    except OSError as exc:
        raise ApiError(f"cannot run xdg-open: {exc}", 500) from None
    return jsonify(status="success", message="File opened successfully", pid=pid)
