"""Shared pieces of the cloud clients: settings files, errors and a small JSON-over-HTTP session."""
from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from desktop_env.session import SetupError

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0  # seconds, per HTTP request to a vendor API


class CloudAPIError(SetupError):
    """A vendor API refused a request or could not be reached (bad credentials, network, quota).

    It is a :class:`SetupError`, so the evaluator never turns it into a silent score of 0.

    Attributes:
        vendor: the vendor's display name.
        status: HTTP status code, or None when there was no answer.
        body: the start of the reply body.
    """

    def __init__(self, vendor: str, message: str, status: int | None = None, body: str = "",
                 step: str | None = None):
        self.vendor = vendor
        self.status = status
        self.body = body
        where = f" (HTTP {status})" if status is not None else ""
        tail = f": {body[:500]}" if body else ""
        super().__init__(f"{vendor}: {message}{where}{tail}", step=step)


class CloudNotFound(CloudAPIError):
    """The vendor answered 404: the resource a getter asked for does not exist."""


class SettingsError(SetupError):
    """A filled-in settings file is malformed or lacks a field.

    Attributes:
        path: the settings file.
        field: the offending field.
    """

    def __init__(self, path: Path | str, field_: str | None, message: str, step: str | None = None):
        self.path = str(path)
        self.field = field_
        where = f"settings file {path}" + (f", field {field_!r}" if field_ else "")
        super().__init__(f"{where}: {message}", step=step)


@dataclass
class Settings:
    """A loaded account settings file.

    Attributes:
        path: where it was read from.
        data: its JSON content (an object, or for Google Cloud a list of project objects).
        resolve: turns a path written inside the file (e.g. ``keyfile_path``) into a host path;
            relative paths resolve like task paths (suite root first, then the task folder).
        step: the step or getter reading it (for messages).
    """

    path: Path
    data: Any
    resolve: Callable[[str], Path] = field(default=lambda p: Path(p))
    step: str | None = None

    @classmethod
    def read(cls, path: Path, resolve: Callable[[str], Path] | None = None, step: str | None = None) -> "Settings":
        """Parse ``path`` as JSON (or YAML for ``.yml``/``.yaml``, e.g. PyDrive's settings).

        Raises:
            SettingsError: the file is not valid JSON/YAML (the message gives line and column).
        """
        if Path(path).suffix in (".yml", ".yaml"):
            import yaml
            try:
                data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            except yaml.YAMLError as exc:
                raise SettingsError(path, None, f"not valid YAML: {exc}", step=step) from exc
            return cls(Path(path), data, resolve or (lambda p: Path(p)), step)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SettingsError(path, None, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                                "JSON has no comments, remove any '//' lines copied from a template",
                                step=step) from exc
        return cls(Path(path), data, resolve or (lambda p: Path(p)), step)

    def require(self, key: str, obj: dict | None = None, aliases: tuple[str, ...] = ()) -> Any:
        """``obj[key]`` (``obj`` defaults to the file's object), trying ``aliases`` too.

        Raises:
            SettingsError: absent, empty or still the template's placeholder.
        """
        obj = self.data if obj is None else obj
        if not isinstance(obj, dict):
            raise SettingsError(self.path, None, f"expected a JSON object, found {type(obj).__name__}", self.step)
        for k in (key, *aliases):
            value = obj.get(k)
            if value not in (None, ""):
                return value
        names = " or ".join(repr(k) for k in (key, *aliases))
        raise SettingsError(self.path, key, f"missing or empty; set {names} (see the .template beside it)",
                            self.step)

    def get(self, key: str, default: Any = None, obj: dict | None = None) -> Any:
        """``obj[key]`` or ``default`` when absent or empty."""
        obj = self.data if obj is None else obj
        value = obj.get(key) if isinstance(obj, dict) else None
        return default if value in (None, "") else value


class JsonSession:
    """A ``requests`` session for one vendor's JSON REST API, raising :class:`CloudAPIError` on failure.

    Args:
        vendor: display name for messages.
        base_url: prefix of every request path (no trailing slash needed).
        headers: sent with every request (authentication).
        auth: a ``requests`` auth object (e.g. basic auth), or None.
        timeout_s: per-request timeout in seconds.
    """

    def __init__(self, vendor: str, base_url: str, headers: dict | None = None, auth=None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, step: str | None = None):
        import requests

        self.vendor = vendor
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.step = step
        self._session = requests.Session()
        self._session.headers.update({"Accept": "application/json", **(headers or {})})
        self._session.auth = auth

    def request(self, method: str, path: str, *, params: dict | None = None, json_body: Any = None) -> Any:
        """Send one request and return the decoded JSON reply (None for an empty body).

        Raises:
            CloudNotFound: HTTP 404.
            CloudAPIError: any other HTTP error, a network error, or a reply that is not JSON.
        """
        import requests

        url = self.base_url + "/" + path.lstrip("/")
        logger.debug("%s %s %s params=%s", self.vendor, method, url, params)
        try:
            reply = self._session.request(method, url, params=params, json=json_body, timeout=self.timeout_s)
        except requests.RequestException as exc:
            raise CloudAPIError(self.vendor, f"{method} {url} failed: {exc}", step=self.step) from exc
        if reply.status_code == 404:
            raise CloudNotFound(self.vendor, f"{method} {url}: not found", 404, reply.text, step=self.step)
        if reply.status_code in (401, 403):
            raise CloudAPIError(self.vendor, f"{method} {url}: credentials refused; check the token, user and "
                                "password in the settings file", reply.status_code, reply.text, step=self.step)
        if reply.status_code >= 400:
            raise CloudAPIError(self.vendor, f"{method} {url} failed", reply.status_code, reply.text, step=self.step)
        if not reply.content:
            return None
        try:
            return reply.json()
        except ValueError as exc:
            raise CloudAPIError(self.vendor, f"{method} {url}: reply is not JSON", reply.status_code,
                                reply.text, step=self.step) from exc

    def close(self) -> None:
        """Close the underlying connection pool."""
        self._session.close()

    def __enter__(self) -> "JsonSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def missing_client(package: str, vendor: str, step: str | None = None) -> SetupError:
    """The error for a vendor client that is not installed, naming the pip package."""
    return SetupError(f"the {vendor} client is not installed; install it with: pip install {package}", step=step)


def write_csv(rows: Iterable[tuple], path: Path, header: list[str] | None = None) -> Path:
    """Write rows (None as an empty cell) to ``path``; a header row first when given."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        if header:
            writer.writerow(header)
        writer.writerows(rows)
    return path
