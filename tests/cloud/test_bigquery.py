"""BigQuery getters and bigquery_init through google-cloud-bigquery, pointed (client_options api_endpoint)
at a local server speaking BigQuery's REST shapes, with a service-account key whose token_uri is local too."""
from __future__ import annotations

import csv
import json
import re

import pytest

pytest.importorskip("google.cloud.bigquery")

from desktop_env.cloud.base import CloudAPIError, SettingsError  # noqa: E402
from desktop_env.registry import GETTERS, SETUP_STEPS  # noqa: E402

PROJECT = "spider-test-4711"
GCP = "evaluation_examples/settings/google/gcp_config.json"
BQ = "/bigquery/v2/projects/" + PROJECT


def error(code: int, status: str, reason: str, message: str):
    """Google's JSON error shape."""
    return code, {"error": {"code": code, "message": message, "status": status,
                            "errors": [{"message": message, "domain": "global", "reason": reason}]}}


class BigQueryState:
    """Datasets with typed tables, a mini query engine for ``SELECT cols FROM `p.d.t```, and connections."""

    def __init__(self, api):
        self.datasets = {"census": {"population": ([{"name": "city", "type": "STRING", "mode": "NULLABLE"},
                                                    {"name": "n", "type": "INTEGER", "mode": "NULLABLE"}],
                                                   [["Lyon", "522000"], ["Nice", None]])}}
        self.connections = ["projects/123456/locations/us/connections/my_conn"]
        self.tokens = 0
        self.deleted, self.loads = [], []
        api.route("POST", r"/token")(self.token)
        api.route("GET", rf"{BQ}/datasets")(self.list_datasets)
        api.route("POST", rf"{BQ}/datasets")(self.create_dataset)
        api.route("DELETE", rf"{BQ}/datasets/(\w+)")(self.delete_dataset)
        api.route("GET", rf"{BQ}/datasets/(\w+)")(self.get_dataset)
        api.route("GET", rf"{BQ}/datasets/(\w+)/tables/(\w+)")(self.get_table)
        api.route("POST", rf"{BQ}/datasets/(\w+)/tables")(self.create_table)
        api.route("GET", rf"{BQ}/datasets/(\w+)/(routines|models)")(self.empty_list)
        api.route("GET", rf"{BQ}/jobs")(self.list_jobs)
        api.route("POST", rf"/upload{BQ}/jobs")(self.upload_load_job)
        api.route("GET", rf"{BQ}/jobs/([\w-]+)")(self.get_job)
        api.route("POST", rf"{BQ}/queries")(self.query)
        api.route("GET", rf"/v1/projects/{PROJECT}/locations/(\w+)/connections")(self.list_connections)
        self.api = api

    def authorized(self, req):
        return req.headers.get("authorization", "").startswith("Bearer ")

    def token(self, req, m):
        self.tokens += 1
        assert b"grant_type" in req.body and b"assertion" in req.body
        return 200, {"access_token": "ya29.local-test-token", "expires_in": 3600, "token_type": "Bearer"}

    def list_datasets(self, req, m):
        if not self.authorized(req):
            return error(401, "UNAUTHENTICATED", "unauthorized", "Request is missing required authentication")
        return 200, {"kind": "bigquery#datasetList", "etag": "x", "datasets": [
            {"kind": "bigquery#dataset", "id": f"{PROJECT}:{d}", "location": "US",
             "datasetReference": {"projectId": PROJECT, "datasetId": d}} for d in sorted(self.datasets)]}

    def create_dataset(self, req, m):
        ref = req.json()["datasetReference"]
        if ref["datasetId"] in self.datasets:
            return error(409, "ALREADY_EXISTS", "duplicate", f"Already Exists: Dataset {PROJECT}:{ref['datasetId']}")
        self.datasets[ref["datasetId"]] = {}
        return 200, {"kind": "bigquery#dataset", "id": f"{PROJECT}:{ref['datasetId']}", "datasetReference": ref}

    def get_dataset(self, req, m):
        if m.group(1) not in self.datasets:
            return error(404, "NOT_FOUND", "notFound", f"Not found: Dataset {PROJECT}:{m.group(1)}")
        return 200, {"kind": "bigquery#dataset", "id": f"{PROJECT}:{m.group(1)}",
                     "datasetReference": {"projectId": PROJECT, "datasetId": m.group(1)}}

    def delete_dataset(self, req, m):
        self.deleted.append((m.group(1), req.query.get("deleteContents")))
        self.datasets.pop(m.group(1), None)
        return 204, None

    def table_resource(self, ds, tb):
        fields, rows = self.datasets[ds][tb]
        return {"kind": "bigquery#table", "id": f"{PROJECT}:{ds}.{tb}", "type": "TABLE", "numRows": str(len(rows)),
                "tableReference": {"projectId": PROJECT, "datasetId": ds, "tableId": tb}, "schema": {"fields": fields}}

    def get_table(self, req, m):
        ds, tb = m.groups()
        if tb not in self.datasets.get(ds, {}):
            return error(404, "NOT_FOUND", "notFound", f"Not found: Table {PROJECT}:{ds}.{tb}")
        return 200, self.table_resource(ds, tb)

    def create_table(self, req, m):
        body = req.json()
        ref = body["tableReference"]
        self.datasets[m.group(1)][ref["tableId"]] = ((body.get("schema") or {}).get("fields", []), [])
        return 200, self.table_resource(m.group(1), ref["tableId"])

    def empty_list(self, req, m):
        return 200, {m.group(2): []}

    def list_jobs(self, req, m):
        return 200, {"kind": "bigquery#jobList", "jobs": []}

    def upload_load_job(self, req, m):
        """A multipart upload: the job resource (JSON) then the CSV bytes."""
        assert req.query["uploadType"] == "multipart"
        boundary = re.search(r'boundary="?([^";]+)"?', req.headers["content-type"]).group(1).encode()
        parts = [p for p in req.body.split(b"--" + boundary) if p.strip() not in (b"", b"--")]
        job = json.loads(parts[0].split(b"\r\n\r\n", 1)[1])
        data = parts[1].split(b"\r\n\r\n", 1)[1].rstrip(b"\r\n").decode()
        load = job["configuration"]["load"]
        dest = load["destinationTable"]
        rows = list(csv.reader(data.splitlines()))[int(load.get("skipLeadingRows", 0)):]
        self.datasets[dest["datasetId"]][dest["tableId"]][1].extend(rows)
        self.loads.append(load)
        job["jobReference"].setdefault("location", "US")
        self.job = {**job, "id": f"{PROJECT}:US.{job['jobReference']['jobId']}", "status": {"state": "DONE"}}
        return 200, self.job

    def get_job(self, req, m):
        return 200, self.job

    def query(self, req, m):
        body = req.json()
        assert body.get("useLegacySql") is False
        hit = re.fullmatch(r"SELECT (.+) FROM `([\w-]+)\.(\w+)\.(\w+)`", body["query"].strip())
        if not hit:
            return error(400, "INVALID_ARGUMENT", "invalidQuery", f"Syntax error in {body['query']!r}")
        cols, project, ds, tb = hit.groups()
        if project != PROJECT or tb not in self.datasets.get(ds, {}):
            return error(404, "NOT_FOUND", "notFound", f"Not found: Table {project}:{ds}.{tb}")
        fields, rows = self.datasets[ds][tb]
        names = [f["name"] for f in fields]
        wanted = names if cols.strip() == "*" else [c.strip() for c in cols.split(",")]
        if any(c not in names for c in wanted):
            return error(400, "INVALID_ARGUMENT", "invalidQuery", f"Unrecognized name in {cols}")
        idx = [names.index(c) for c in wanted]
        return 200, {"kind": "bigquery#queryResponse", "jobComplete": True, "cacheHit": False,
                     "jobReference": {"projectId": PROJECT, "jobId": "job_local_1", "location": "US"},
                     "schema": {"fields": [fields[i] for i in idx]}, "totalRows": str(len(rows)),
                     "rows": [{"f": [{"v": r[i]} for i in idx]} for r in rows]}

    def list_connections(self, req, m):
        if not self.authorized(req):
            return error(401, "UNAUTHENTICATED", "unauthorized", "missing credentials")
        return 200, {"connections": [{"name": n, "friendlyName": n.rsplit("/", 1)[-1],
                                      "cloudResource": {"serviceAccountId": "x@gcp-sa-bigquery-condel.iam"}}
                                     for n in self.connections]}


@pytest.fixture(scope="module")
def private_key_pem():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.fixture
def bq(fake_api, cloud_ctx, private_key_pem):
    state = BigQueryState(fake_api)
    keyfile = cloud_ctx.root / "evaluation_examples" / "settings" / "google" / f"{PROJECT}.json"
    cloud_ctx.write_settings(f"evaluation_examples/settings/google/{PROJECT}.json", {
        "type": "service_account", "project_id": PROJECT, "private_key_id": "k1", "private_key": private_key_pem,
        "client_email": f"sa@{PROJECT}.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": f"{fake_api.url}/token"})
    cloud_ctx.write_settings(GCP, [
        {"project_name": "other", "project_id": "nope", "keyfile_path": "missing.json"},
        {"project_name": "bigquery-project", "project_id": PROJECT,
         "keyfile_path": "evaluation_examples/settings/google/{project_id}.json",
         "api_endpoint": fake_api.url, "connection_api_endpoint": fake_api.url}])
    assert keyfile.is_file()
    return state, cloud_ctx


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_table_to_csv(bq):
    state, ctx = bq
    out = GETTERS["bigquery_table_to_csv"](ctx, project_name="bigquery-project", dataset_id="census",
                                           table_id="population", schema=["city", "n"], dest="pop.csv")
    assert read_csv(out) == [["Lyon", "522000"], ["Nice", ""]]
    assert state.tokens >= 1  # the key's token_uri was used: a real service-account flow


def test_table_to_csv_missing_table_or_column_is_none(bq):
    _, ctx = bq
    get = GETTERS["bigquery_table_to_csv"]
    assert get(ctx, project_index=1, dataset_id="census", table_id="nope", dest="x.csv") is None
    assert get(ctx, project_index=1, dataset_id="census", table_id="population", schema=["zip"], dest="x.csv") is None


def test_sql_result_to_csv(bq):
    _, ctx = bq
    sql = ctx.task.task_dir / "query.sql"
    sql.write_text("SELECT city FROM `{}.census.population`\n")
    out = GETTERS["bigquery_sql_result_to_csv"](ctx, project_name="bigquery-project", sql=str(sql), dest="q.csv")
    assert read_csv(out) == [["Lyon"], ["Nice"]]


def test_datasets_and_connections(bq):
    _, ctx = bq
    assert GETTERS["bigquery_datasets"](ctx, project_name="bigquery-project") == ["census"]
    assert GETTERS["bigquery_connections"](ctx, project_name="bigquery-project") == ["my_conn"]


def test_init_empty_create_and_copy_keyfile(bq, fake_api):
    state, ctx = bq
    (ctx.task.task_dir / "returns.csv").write_text("7,broken\n8,late\n")
    SETUP_STEPS["bigquery_init"](ctx, project_name="bigquery-project", actions=[
        {"type": "empty"},
        {"type": "create_table", "dataset_id": "sales", "table_id": "orders",
         "schema_from_json": [{"name": "id", "type": "INTEGER"}, {"name": "item"}]},
        {"type": "create_table", "dataset_id": "sales", "table_id": "returns",
         "schema_from_json": [{"name": "id", "type": "INTEGER"}, {"name": "reason"}],
         "data_from_csv": "returns.csv"},
        {"type": "copy_keyfile", "dest": "/home/user/keyfile.json"}])
    assert state.deleted == [("census", "true")]
    fields, _ = state.datasets["sales"]["orders"]
    assert [(f["name"], f["type"], f["mode"]) for f in fields] == [("id", "INTEGER", "NULLABLE"),
                                                                    ("item", "STRING", "NULLABLE")]
    assert state.datasets["sales"]["returns"][1] == [["7", "broken"], ["8", "late"]]
    assert state.loads[0]["sourceFormat"] == "CSV" and "autodetect" not in state.loads[0]
    assert json.loads(ctx.controller.uploads["/home/user/keyfile.json"])["project_id"] == PROJECT


def test_init_unknown_action(bq):
    _, ctx = bq
    with pytest.raises(Exception, match="'truncate' is not a bigquery_init action"):
        SETUP_STEPS["bigquery_init"](ctx, project_name="bigquery-project", actions=[{"type": "truncate"}])


def test_settings_errors_name_the_field(bq):
    _, ctx = bq
    with pytest.raises(SettingsError, match="no project named 'ads'"):
        GETTERS["bigquery_datasets"](ctx, project_name="ads")
    with pytest.raises(SettingsError, match="several projects: the task must give 'project_name'"):
        GETTERS["bigquery_datasets"](ctx)
    with pytest.raises(SettingsError, match="field 'keyfile_path'.*missing.json does not exist"):
        GETTERS["bigquery_datasets"](ctx, project_name="other")


def test_refused_token_raises(bq, fake_api):
    state, ctx = bq
    fake_api.routes.insert(0, ("POST", re.compile(r"/token/?$"),
                               lambda req, m: (400, {"error": "invalid_grant", "error_description": "Invalid JWT"})))
    with pytest.raises(CloudAPIError, match="could not authenticate"):
        GETTERS["bigquery_datasets"](ctx, project_name="bigquery-project")
