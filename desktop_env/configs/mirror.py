"""Prepared downloads: every file a suite fetches by URL, kept in one folder and checked by hash.

A mirror folder holds ``manifest.json`` and ``files/``. The manifest maps each URL to the file
that stands for it (its path in the folder, size, sha256, the date it was fetched, and the task
files that use it). ``desktop-env mirror SUITE --out DIR`` fills it through the host (see
``desktop_env/cli_mirror.py``); ``run.py --download_mirror DIR`` (``DesktopEnv(download_mirror=DIR)``)
then serves every URL fetch of setup steps and getters from it, after checking the file's hash,
and never touches the network.

An interrupted fill loses nothing: each file is written aside and renamed, and the manifest is
rewritten after each file. A rerun fetches what is missing and fetches the rest again to report
what changed upstream; a changed file is kept beside the old one (``<path>.upstream``) and the
manifest records the change, until ``accept_changes`` makes the new file the one served.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from desktop_env.limits import limit
from desktop_env.session import SetupError

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
FILES = "files"
MANIFEST_VERSION = 1
#: What the error of a URL missing from a mirror tells the user to run.
FILL_COMMAND = "desktop-env mirror SUITE_DIR_OR_INDEX --out {root}"


class MirrorError(SetupError):
    """A URL the task fetches cannot be served from the mirror (missing, or its file changed)."""

    def __init__(self, message: str):
        super().__init__(message, step="download_mirror")


def sha256_of(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def file_name_for(url: str, content_disposition: str | None = None) -> str:
    """The name a URL's file is kept under: a digest of the whole URL (URLs differing only in their
    query, as Google Drive's ``uc?id=...`` links do, get their own files) and a readable name (the
    server's ``Content-Disposition`` filename, else the URL's last path part, else its ``id``)."""
    parts = urllib.parse.urlsplit(url)
    name = ""
    if content_disposition:
        found = re.search(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)", content_disposition, re.IGNORECASE)
        name = urllib.parse.unquote(found.group(1)) if found else ""
    name = name or urllib.parse.unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
    query_id = urllib.parse.parse_qs(parts.query).get("id")
    if query_id and "." not in name:
        name = query_id[0]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name).strip("._")[:80] or "download"
    return f"{sha256_of(url.encode('utf-8'))[:16]}-{name}"


@dataclass
class FillReport:
    """What one fill did, URL by URL: ``fetched`` (new), ``unchanged``, ``changed`` upstream (kept
    aside unless accepted), ``accepted`` (a change now served) and ``failed`` (URL -> reason)."""

    fetched: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


@dataclass
class VerifyReport:
    """The mirror's files against its manifest: ``ok``, ``missing`` and ``changed`` (hash differs) URLs."""

    ok: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


def fetch_url(url: str, timeout_s: float | None = None) -> tuple[bytes, str | None]:
    """Download ``url`` through the host; returns its bytes and the ``Content-Disposition`` header.

    Raises:
        OSError: the download failed (HTTP error, unreachable host, timeout).
    """
    with urllib.request.urlopen(url, timeout=timeout_s or limit("setup.download")) as resp:  # noqa: S310 - task-given URL
        return resp.read(), resp.headers.get("Content-Disposition")


class Mirror:
    """A mirror folder (see the module docstring).

    Args:
        root: the folder; it need not exist yet for :meth:`fill`.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).expanduser().resolve()
        self.entries: dict[str, dict] = {}
        manifest = self.root / MANIFEST
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
                self.entries = dict(data["files"])
            except (ValueError, KeyError, TypeError) as exc:
                raise MirrorError(f"{manifest} is not a mirror manifest ({exc}); fill the folder again with "
                                  f"{FILL_COMMAND.format(root=self.root)}") from exc

    @classmethod
    def open(cls, root: str | os.PathLike) -> "Mirror":
        """A mirror to serve from: its folder must hold a manifest.

        Raises:
            MirrorError: no manifest there (the message gives the command that makes one).
        """
        mirror = cls(root)
        if not (mirror.root / MANIFEST).is_file():
            raise MirrorError(f"{mirror.root} holds no {MANIFEST}: fill it with "
                              f"{FILL_COMMAND.format(root=mirror.root)}")
        return mirror

    # -- serving --------------------------------------------------------------------------
    def read(self, url: str) -> bytes:
        """The bytes standing for ``url``, after checking their hash against the manifest.

        Raises:
            MirrorError: the URL is not in the mirror, its file is missing, or its hash differs.
        """
        entry = self.entries.get(url)
        expected = self.root / entry["path"] if entry else self.root / FILES / file_name_for(url)
        if entry is None:
            raise MirrorError(f"{url} is not in the download mirror {self.root} (it would be {expected}); "
                              f"add it with {FILL_COMMAND.format(root=self.root)}")
        try:
            data = expected.read_bytes()
        except OSError as exc:
            raise MirrorError(f"{url} is in the manifest of {self.root} but its file {expected} cannot be read "
                              f"({exc.strerror or exc}); fetch it again with {FILL_COMMAND.format(root=self.root)}"
                              ) from exc
        digest = sha256_of(data)
        if digest != entry["sha256"]:
            raise MirrorError(f"hash mismatch for {url}: {expected} has sha256 {digest}, the manifest says "
                              f"{entry['sha256']}; the file was altered: fetch it again with "
                              f"{FILL_COMMAND.format(root=self.root)}, or check it with "
                              f"desktop-env mirror verify {self.root}")
        logger.info("served %s from the mirror (%s, %d bytes)", url, expected.name, len(data))
        return data

    # -- filling ----------------------------------------------------------------------------
    def fill(self, uses: dict[str, list[str]], recheck: bool = True, accept_changes: bool = False,
             fetch: Callable[[str], tuple[bytes, str | None]] = fetch_url,
             progress: Callable[[int, int, str, str], None] | None = None) -> FillReport:
        """Download every URL of ``uses`` (URL -> task files using it) that the mirror lacks; with
        ``recheck``, fetch the others again and report those whose content changed upstream.

        Args:
            uses: the URLs to hold, each with the task files naming it (kept in the manifest).
            recheck: fetch URLs already held, to find upstream changes (False: only fill what is missing).
            accept_changes: serve a changed file from now on (else it waits as ``<path>.upstream``).
            fetch: downloads one URL (tests give their own).
            progress: called as ``progress(i, total, url, outcome)`` after each URL.
        """
        report = FillReport()
        (self.root / FILES).mkdir(parents=True, exist_ok=True)
        for i, (url, tasks) in enumerate(sorted(uses.items()), 1):
            entry = self.entries.get(url)
            held = entry is not None and (self.root / entry["path"]).is_file()
            if held and not recheck and not (accept_changes and entry.get("upstream")):
                entry["tasks"] = sorted(set(entry.get("tasks", [])) | set(tasks))
                report.unchanged.append(url)
                outcome = "held"
            else:
                outcome = self._fill_one(url, tasks, entry if held else None, accept_changes, fetch, report)
            self._save()
            if progress is not None:
                progress(i, len(uses), url, outcome)
        return report

    def _fill_one(self, url, tasks, entry, accept_changes, fetch, report) -> str:
        pending = (entry or {}).get("upstream")
        if entry is not None and pending and accept_changes and (self.root / pending["path"]).is_file():
            data = (self.root / pending["path"]).read_bytes()  # accept the change found before
        else:
            try:
                data, disposition = fetch(url)
            except OSError as exc:
                report.failed[url] = str(getattr(exc, "reason", None) or exc)
                return f"FAILED: {report.failed[url]}"
            if entry is None:
                path = f"{FILES}/{file_name_for(url, disposition)}"
                self._write(path, data)
                self.entries[url] = self._entry(url, path, data, tasks)
                report.fetched.append(url)
                return f"fetched ({len(data)} bytes)"
        if sha256_of(data) == entry["sha256"]:
            entry.pop("upstream", None)
            entry["tasks"] = sorted(set(entry.get("tasks", [])) | set(tasks))
            report.unchanged.append(url)
            return "unchanged"
        if accept_changes:
            self._write(entry["path"], data)
            self.entries[url] = self._entry(url, entry["path"], data, sorted(set(entry.get("tasks", [])) | set(tasks)))
            if pending:
                (self.root / pending["path"]).unlink(missing_ok=True)
            report.accepted.append(url)
            return "changed upstream: the new file is served"
        aside = entry["path"] + ".upstream"
        self._write(aside, data)
        entry["upstream"] = {"path": aside, "size": len(data), "sha256": sha256_of(data), "date": _now()}
        report.changed.append(url)
        return f"CHANGED upstream: kept aside as {aside}, the old file is still served (--accept_changes to switch)"

    def _entry(self, url: str, path: str, data: bytes, tasks) -> dict:
        return {"url": url, "path": path, "size": len(data), "sha256": sha256_of(data), "date": _now(),
                "tasks": sorted(set(tasks))}

    def _write(self, rel: str, data: bytes) -> None:
        target = self.root / rel
        partial = target.with_name(target.name + ".partial")
        partial.write_bytes(data)
        os.replace(partial, target)

    def _save(self) -> None:
        manifest = self.root / MANIFEST
        partial = manifest.with_name(MANIFEST + ".partial")
        partial.write_text(json.dumps({"version": MANIFEST_VERSION, "files": self.entries}, indent=1,
                                      sort_keys=True) + "\n", encoding="utf-8")
        os.replace(partial, manifest)

    # -- checking ---------------------------------------------------------------------------
    def verify(self) -> VerifyReport:
        """Hash every file again against the manifest."""
        report = VerifyReport()
        for url, entry in sorted(self.entries.items()):
            path = self.root / entry["path"]
            if not path.is_file():
                report.missing.append(url)
            elif sha256_of(path.read_bytes()) != entry["sha256"]:
                report.changed.append(url)
            else:
                report.ok.append(url)
        return report


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
