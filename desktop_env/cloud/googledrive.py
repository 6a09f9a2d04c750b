"""Google Drive through the Drive REST API v3, authorized by google-auth with a user's OAuth refresh token."""
from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

from desktop_env.cloud.base import CloudAPIError, CloudNotFound, Settings, SettingsError, missing_client

logger = logging.getLogger(__name__)

VENDOR = "Google Drive"
API = "https://www.googleapis.com"
TOKEN_URI = "https://oauth2.googleapis.com/token"
FOLDER = "application/vnd.google-apps.folder"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SCOPES = ("https://www.googleapis.com/auth/drive",)


def _read_json(path: Path, settings: Settings, field_: str) -> dict:
    if not path.is_file():
        raise SettingsError(settings.path, field_, f"{path} does not exist", settings.step)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SettingsError(settings.path, field_, f"{path} is not valid JSON: {exc}", settings.step) from exc


def credentials_from_settings(settings: Settings):
    """User OAuth credentials from a Drive settings file.

    Two layouts are read: PyDrive's ``settings.yml`` (``client_config_file`` and
    ``save_credentials_file``, the suite's layout) and this project's JSON
    (``client_secrets_file`` and ``credentials_file``). The credentials file holds a
    ``refresh_token`` (oauth2client's saved format and google-auth's ``authorized_user``
    format both work); the client id and secret come from it or from the client secrets file.

    Raises:
        SettingsError: a file is missing or lacks the refresh token or client id/secret.
    """
    try:
        from google.oauth2.credentials import Credentials
    except ImportError as exc:  # pragma: no cover - depends on the host
        raise missing_client("google-auth", VENDOR, settings.step) from exc
    data = settings.data if isinstance(settings.data, dict) else {}
    cred_key = "save_credentials_file" if data.get("save_credentials_file") else "credentials_file"
    creds = _read_json(settings.resolve(settings.require(cred_key, aliases=("save_credentials_file",))),
                       settings, cred_key)
    client = {}
    secrets_key = "client_config_file" if data.get("client_config_file") else "client_secrets_file"
    if data.get(secrets_key):
        secrets = _read_json(settings.resolve(data[secrets_key]), settings, secrets_key)
        client = secrets.get("installed") or secrets.get("web") or secrets
    client_id = creds.get("client_id") or client.get("client_id")
    client_secret = creds.get("client_secret") or client.get("client_secret")
    if not creds.get("refresh_token") or not client_id or not client_secret:
        raise SettingsError(settings.path, cred_key, "the credentials need a refresh_token, and a client_id and "
                            "client_secret (in them or in the client secrets file); authorize once with an "
                            "OAuth desktop client to create them", settings.step)
    return Credentials(token=None, refresh_token=creds["refresh_token"], client_id=client_id,
                       client_secret=client_secret, token_uri=creds.get("token_uri") or client.get("token_uri")
                       or TOKEN_URI, scopes=list(SCOPES))


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class Drive:
    """The Drive v3 files API of one user.

    Args:
        credentials: google-auth credentials.
        api_endpoint: ``https://www.googleapis.com`` unless overridden (settings ``api_endpoint``).
    """

    def __init__(self, credentials, api_endpoint: str | None = None, step: str | None = None):
        from google.auth.transport.requests import AuthorizedSession
        self.base = (api_endpoint or API).rstrip("/")
        self.step = step
        self.session = AuthorizedSession(credentials)

    @classmethod
    def from_settings(cls, settings: Settings) -> "Drive":
        """A client for the account of a Drive settings file (see :func:`credentials_from_settings`)."""
        data = settings.data if isinstance(settings.data, dict) else {}
        return cls(credentials_from_settings(settings), data.get("api_endpoint"), step=settings.step)

    def _call(self, method: str, path: str, **kwargs) -> Any:
        from google.auth import exceptions as auth_exc
        import requests
        url = self.base + path
        try:
            reply = self.session.request(method, url, timeout=60, **kwargs)
        except auth_exc.GoogleAuthError as exc:
            raise CloudAPIError(VENDOR, f"could not authorize with the saved credentials: {exc}", step=self.step) from exc
        except requests.RequestException as exc:
            raise CloudAPIError(VENDOR, f"{method} {url} failed: {exc}", step=self.step) from exc
        if reply.status_code == 404:
            raise CloudNotFound(VENDOR, f"{method} {url}: not found", 404, reply.text, step=self.step)
        if reply.status_code >= 400:
            raise CloudAPIError(VENDOR, f"{method} {url} failed", reply.status_code, reply.text, step=self.step)
        return reply

    def list(self, query: str) -> list[dict]:
        """Files matching a Drive query (``q``), every page."""
        out, token = [], None
        while True:
            params = {"q": query, "pageSize": 1000, "fields": "nextPageToken,files(id,name,mimeType,parents)",
                      **({"pageToken": token} if token else {})}
            body = self._call("GET", "/drive/v3/files", params=params).json()
            out += body.get("files", [])
            token = body.get("nextPageToken")
            if not token:
                return out

    def children(self, parent: str, name: str | None = None, folders: bool | None = None,
                 untrashed: bool = True) -> list[dict]:
        """Items under ``parent`` (an id or ``root``), optionally by exact name and kind."""
        q = [f"{_quote(parent)} in parents"]
        if name is not None:
            q.append(f"name = {_quote(name)}")
        if folders is not None:
            q.append(f"mimeType {'=' if folders else '!='} '{FOLDER}'")
        if untrashed:
            q.append("trashed = false")
        return self.list(" and ".join(q))

    def remove(self, file_id: str, trash: bool = False) -> None:
        """Delete a file or folder for good, or move it to the trash."""
        if trash:
            self._call("PATCH", f"/drive/v3/files/{file_id}", json={"trashed": True})
        else:
            self._call("DELETE", f"/drive/v3/files/{file_id}")

    def create_folder(self, name: str, parent: str = "root") -> str:
        """Create a folder and return its id."""
        body = {"name": name, "mimeType": FOLDER, "parents": [parent]}
        return self._call("POST", "/drive/v3/files", json=body, params={"fields": "id"}).json()["id"]

    def upload(self, name: str, data: bytes, parent: str = "root") -> str:
        """Upload a file (one multipart request) and return its id."""
        boundary = f"desktop-env-{uuid.uuid4().hex}"
        meta = json.dumps({"name": name, "parents": [parent]}).encode()
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode() + meta
                + f"\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n\r\n".encode() + data
                + f"\r\n--{boundary}--\r\n".encode())
        reply = self._call("POST", "/upload/drive/v3/files", params={"uploadType": "multipart", "fields": "id"},
                           data=body, headers={"Content-Type": f"multipart/related; boundary={boundary}"})
        return reply.json()["id"]

    def export(self, file_id: str, mime_type: str = XLSX) -> bytes:
        """A Google Docs file (e.g. a Sheet) exported as ``mime_type``."""
        return self._call("GET", f"/drive/v3/files/{file_id}/export", params={"mimeType": mime_type}).content

    def close(self) -> None:
        """Close the HTTP session."""
        self.session.close()

    def __enter__(self) -> "Drive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- googledrive_init actions ---------------------------------------------------------------------
def _as_path(value) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def delete(drive: Drive, path=None, trash: bool = False) -> None:
    """Delete (or trash) the item at ``path`` (a list of names from the root); everything in the
    root when ``path`` is empty. Items shared with the user that cannot be deleted are skipped."""
    parts = _as_path(path) if path else []
    parent = "root"
    for name in parts[:-1]:
        found = drive.children(parent, name, folders=True)
        if not found:
            return
        if len(found) > 1:
            raise ValueError(f"several folders named {'/'.join(parts)} exist in Google Drive")
        parent = found[0]["id"]
    items = drive.children(parent, parts[-1] if parts else None, untrashed=trash)
    for item in items:
        try:
            drive.remove(item["id"], trash=trash)
        except CloudAPIError as exc:
            if exc.status != 403:
                raise
            logger.info("Google Drive: cannot delete %s (shared with this user): %s", item.get("name"), exc)


def mkdirs(drive: Drive, path, exist_ok: bool = True) -> str:
    """Create the folders of ``path`` that do not exist; return the last folder's id."""
    parts = _as_path(path)
    parent = "root"
    for i, name in enumerate(parts):
        found = drive.children(parent, name, folders=True)
        if not found:
            parent = drive.create_folder(name, parent)
            continue
        if len(found) > 1:
            raise ValueError(f"several folders named {'/'.join(parts[:i + 1])} exist in Google Drive")
        if not exist_ok and i == len(parts) - 1:
            raise ValueError(f"folder {'/'.join(parts)} already exists in Google Drive")
        parent = found[0]["id"]
    return parent


def upload(drive: Drive, source: Path, path) -> str:
    """Upload a local file to ``path`` (folders created as needed), or a folder tree into ``path``
    (which must not exist yet); return the id of the file or top folder."""
    parts = _as_path(path)
    if source.is_file():
        parent = mkdirs(drive, parts[:-1]) if len(parts) > 1 else "root"
        return drive.upload(parts[-1], source.read_bytes(), parent)
    top = mkdirs(drive, parts, exist_ok=False)
    for child in sorted(source.iterdir()):
        if child.is_file():
            drive.upload(child.name, child.read_bytes(), top)
        else:
            upload(drive, child, parts + [child.name])
    return top
