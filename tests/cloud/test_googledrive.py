"""Google Drive steps and googlesheet_active_file against a local server speaking Drive API v3, Google's
OAuth token endpoint (refresh-token grant) and Chromium's DevTools /json/list."""
from __future__ import annotations

import io
import re
from urllib.parse import parse_qs

import pytest

pytest.importorskip("google.auth")

from desktop_env.cloud.base import CloudAPIError, SettingsError  # noqa: E402
from desktop_env.cloud.googledrive import FOLDER, XLSX  # noqa: E402
from desktop_env.registry import GETTERS, SETUP_STEPS  # noqa: E402

SETTINGS = "evaluation_examples/settings/googledrive/settings.yml"
SHEET_ID = "1AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789-sheet"


class DriveState:
    """A user's Drive: files by id, a Drive-query subset, multipart uploads, Sheets export."""

    def __init__(self, api):
        self.files = {SHEET_ID: {"id": SHEET_ID, "name": "Budget", "parents": ["root"], "trashed": False,
                                 "mimeType": "application/vnd.google-apps.spreadsheet"}}
        self.refreshes = 0
        self.active_url = f"https://docs.google.com/spreadsheets/d/{SHEET_ID}/edit#gid=0"
        self.next_id = 1
        api.route("POST", r"/token")(self.token)
        api.route("GET", r"/drive/v3/files")(self.list)
        api.route("POST", r"/drive/v3/files")(self.create)
        api.route("POST", r"/upload/drive/v3/files")(self.upload)
        api.route("DELETE", r"/drive/v3/files/([\w-]+)")(self.delete)
        api.route("PATCH", r"/drive/v3/files/([\w-]+)")(self.patch)
        api.route("GET", r"/drive/v3/files/([\w-]+)/export")(self.export)
        api.route("GET", r"/json/list")(lambda req, m: (200, [
            {"id": "T1", "type": "page", "title": "Budget - Google Sheets", "url": self.active_url},
            {"id": "T2", "type": "page", "title": "Inbox", "url": "https://mail.google.com/"}]))
        self.api = api

    def token(self, req, m):
        form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
        if form.get("grant_type") != "refresh_token" or form.get("refresh_token") != "1//refresh-me" \
                or form.get("client_id") != "cid.apps.googleusercontent.com":
            return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
        self.refreshes += 1
        return 200, {"access_token": "ya29.drive-token", "expires_in": 3599, "token_type": "Bearer",
                     "scope": "https://www.googleapis.com/auth/drive"}

    def _new(self, name, parent, mime, content=b""):
        fid = f"f{self.next_id}"
        self.next_id += 1
        self.files[fid] = {"id": fid, "name": name, "parents": [parent], "mimeType": mime, "trashed": False,
                           "content": content}
        return fid

    def matches(self, f, q):
        for clause in q.split(" and "):
            clause = clause.strip()
            if m := re.fullmatch(r"'(.+)' in parents", clause):
                ok = m.group(1) in f["parents"]
            elif m := re.fullmatch(r"name = '(.+)'", clause):
                ok = f["name"] == m.group(1)
            elif m := re.fullmatch(r"mimeType (=|!=) '(.+)'", clause):
                ok = (f["mimeType"] == m.group(2)) == (m.group(1) == "=")
            elif m := re.fullmatch(r"trashed = (true|false)", clause):
                ok = f["trashed"] == (m.group(1) == "true")
            else:
                raise AssertionError(f"query clause the fake does not know: {clause!r}")
            if not ok:
                return False
        return True

    def authorized(self, req):
        return req.headers.get("authorization") == "Bearer ya29.drive-token"

    def list(self, req, m):
        if not self.authorized(req):
            return 401, {"error": {"code": 401, "message": "Request had invalid authentication credentials."}}
        hits = [{k: f[k] for k in ("id", "name", "mimeType", "parents")} for f in self.files.values()
                if self.matches(f, req.query.get("q", ""))]
        return 200, {"kind": "drive#fileList", "incompleteSearch": False, "files": hits}

    def create(self, req, m):
        body = req.json()
        return 200, {"id": self._new(body["name"], body["parents"][0], body["mimeType"])}

    def upload(self, req, m):
        assert req.query["uploadType"] == "multipart"
        boundary = re.search(r"boundary=([^;]+)", req.headers["content-type"]).group(1).encode()
        parts = [p for p in req.body.split(b"--" + boundary) if p.strip() not in (b"", b"--")]
        import json
        meta = json.loads(parts[0].split(b"\r\n\r\n", 1)[1])
        content = parts[1].split(b"\r\n\r\n", 1)[1][:-2]  # drop the CRLF before the next boundary
        return 200, {"id": self._new(meta["name"], meta["parents"][0], "text/plain", content)}

    def _descendants(self, fid):
        out = [fid]
        for f in list(self.files.values()):
            if fid in f["parents"]:
                out += self._descendants(f["id"])
        return out

    def delete(self, req, m):
        if m.group(1) not in self.files:
            return 404, {"error": {"code": 404, "message": f"File not found: {m.group(1)}."}}
        for fid in self._descendants(m.group(1)):
            self.files.pop(fid, None)
        return 204, None

    def patch(self, req, m):
        self.files[m.group(1)].update(req.json())
        return 200, {"id": m.group(1)}

    def export(self, req, m):
        if m.group(1) not in self.files:
            return 404, {"error": {"code": 404, "message": f"File not found: {m.group(1)}."}}
        assert req.query["mimeType"] == XLSX
        from openpyxl import Workbook
        wb = Workbook()
        wb.active.append(["item", "cost"])
        wb.active.append(["rent", 900])
        buf = io.BytesIO()
        wb.save(buf)
        return 200, buf.getvalue()

    def tree(self, parent="root", prefix=""):
        out = []
        for f in sorted(self.files.values(), key=lambda f: f["name"]):
            if parent in f["parents"]:
                out.append(prefix + f["name"] + ("/" if f["mimeType"] == FOLDER else "") + (" (trashed)" if f["trashed"]
                                                                                          else ""))
                out += self.tree(f["id"], prefix + f["name"] + "/")
        return out


@pytest.fixture
def drive(fake_api, cloud_ctx):
    state = DriveState(fake_api)
    cloud_ctx.write_settings("evaluation_examples/settings/googledrive/client_secrets.json", {"installed": {
        "client_id": "cid.apps.googleusercontent.com", "client_secret": "shh", "token_uri": f"{fake_api.url}/token",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth"}})
    cloud_ctx.write_settings("evaluation_examples/settings/googledrive/credentials.json", {  # oauth2client's format
        "access_token": "expired", "client_id": None, "client_secret": None, "refresh_token": "1//refresh-me",
        "token_expiry": "2020-01-01T00:00:00Z", "token_uri": f"{fake_api.url}/token", "user_agent": None,
        "_class": "OAuth2Credentials", "_module": "oauth2client.client"})
    target = cloud_ctx.root / SETTINGS
    target.write_text("client_config_backend: file\n"
                      "client_config_file: evaluation_examples/settings/googledrive/client_secrets.json\n"
                      "save_credentials: True\nsave_credentials_backend: file\n"
                      "save_credentials_file: evaluation_examples/settings/googledrive/credentials.json\n"
                      f"api_endpoint: {fake_api.url}\n")
    port = int(fake_api.url.rsplit(":", 1)[1])
    cloud_ctx.cdp_port_host = port  # the same local server answers DevTools' /json/list
    return state, cloud_ctx


def test_init_mkdirs_upload_delete(drive):
    state, ctx = drive
    (ctx.task.task_dir / "data").mkdir()
    (ctx.task.task_dir / "data" / "a.csv").write_text("x,y\n1,2\n")
    (ctx.task.task_dir / "data" / "sub").mkdir()
    (ctx.task.task_dir / "data" / "sub" / "b.txt").write_text("bee")
    SETUP_STEPS["googledrive_init"](ctx, actions=[
        {"type": "delete", "path": []},
        {"type": "mkdirs", "path": ["reports", "2024"]},
        {"type": "mkdirs", "path": ["reports", "2024"]},  # exist_ok by default
        {"type": "upload", "src": "data/a.csv", "path": ["reports", "2024", "a.csv"]},
        {"type": "upload", "src": "data", "path": ["inputs"]}])
    assert state.tree() == ["inputs/", "inputs/a.csv", "inputs/sub/", "inputs/sub/b.txt", "reports/",
                            "reports/2024/", "reports/2024/a.csv"]
    uploaded = next(f for f in state.files.values() if f["name"] == "b.txt")
    assert uploaded["content"] == b"bee"
    assert state.refreshes == 1  # one token refresh from the saved refresh token
    SETUP_STEPS["googledrive_init"](ctx, actions=[{"type": "delete", "path": ["reports", "2024"], "trash": True},
                                                  {"type": "delete", "path": ["inputs"]}])
    assert state.tree() == ["reports/", "reports/2024/ (trashed)", "reports/2024/a.csv"]
    with pytest.raises(Exception, match="folder reports already exists"):
        SETUP_STEPS["googledrive_init"](ctx, actions=[{"type": "mkdirs", "path": ["reports"], "exist_ok": False}])


def test_general_suite_spelling(drive):
    state, ctx = drive
    SETUP_STEPS["googledrive"](ctx, operation=["delete", "mkdirs"],
                               args=[{"query": "title = 'Budget'", "trash": False}, {"path": ["x", "y"]}])
    assert state.tree() == ["x/", "x/y/"]


def test_googlesheet_active_file(drive):
    state, ctx = drive
    from openpyxl import load_workbook
    out = GETTERS["googlesheet_active_file"](ctx, dest="sheet.xlsx")
    assert [list(r) for r in load_workbook(out).active.iter_rows(values_only=True)] == [["item", "cost"], ["rent", 900]]
    state.active_url = "https://www.example.org/"
    assert GETTERS["googlesheet_active_file"](ctx, dest="sheet.xlsx") is None
    state.active_url = "https://docs.google.com/spreadsheets/d/gone-sheet/edit"
    assert GETTERS["googlesheet_active_file"](ctx, dest="sheet.xlsx") is None


def test_revoked_refresh_token_raises(drive):
    state, ctx = drive
    cred = ctx.root / "evaluation_examples/settings/googledrive/credentials.json"
    cred.write_text(cred.read_text().replace("1//refresh-me", "1//revoked"))
    with pytest.raises(CloudAPIError, match="could not authorize.*invalid_grant"):
        SETUP_STEPS["googledrive_init"](ctx, actions=[{"type": "delete"}])


def test_credentials_without_refresh_token(drive):
    _, ctx = drive
    (ctx.root / "evaluation_examples/settings/googledrive/credentials.json").write_text("{}")
    with pytest.raises(SettingsError, match="field 'save_credentials_file'.*refresh_token"):
        GETTERS["googlesheet_active_file"](ctx, dest="x.xlsx")
