"""dbt Cloud getters and dbt_cloud_init against a local server speaking the Administrative API's v2/v3 shapes."""
from __future__ import annotations

import pytest

from desktop_env.cloud.base import CloudAPIError
from desktop_env.cloud.dbt_cloud import PAGE_LIMIT, DbtCloudClient
from desktop_env.registry import GETTERS, SETUP_STEPS

ACCOUNT = 4242
TOKEN = "dbtc_test_token"
SETTINGS = "evaluation_examples/settings/dbt_cloud/settings.json"


def envelope(data, total=None):
    """The reply envelope every Administrative API endpoint uses."""
    body = {"status": {"code": 200, "is_success": True, "user_message": "Success!", "developer_message": ""},
            "data": data}
    if isinstance(data, list):
        body["extra"] = {"filters": {}, "order_by": "id",
                         "pagination": {"count": len(data), "total_count": len(data) if total is None else total}}
    return body


class DbtCloudState:
    """An account with projects, environments and jobs, served under /api/v2 and /api/v3."""

    def __init__(self, api):
        self.projects = [{"id": 11, "account_id": ACCOUNT, "name": "Analytics", "state": 1,
                          "connection": {"id": 5, "type": "bigquery", "name": "BQ"}}]
        self.environments = {11: [{"id": 21, "project_id": 11, "name": "Production", "type": "deployment",
                                   "dbt_version": "1.7.0-latest", "deployment_type": "production"},
                                  {"id": 22, "project_id": 11, "name": "New Environment", "type": "development",
                                   "dbt_version": "1.6.0-latest", "deployment_type": None}]}
        self.jobs = {11: [{"id": 31, "project_id": 11, "environment_id": 21, "name": "Daily build",
                           "schedule": {"cron": "0 6 * * *", "date": {"type": "every_day"},
                                        "time": {"type": "at_exact_hours", "hours": [6], "interval": None}},
                           "job_completion_trigger_condition": None, "execute_steps": ["dbt build"]},
                          {"id": 32, "project_id": 11, "environment_id": 21, "name": "New Job",
                           "schedule": {"cron": "0 * * * *", "time": {"type": "every_hour", "interval": 1}},
                           "job_completion_trigger_condition": {"condition": {"job_id": 31, "project_id": 11,
                                                                              "statuses": [10, 20]}},
                           "execute_steps": ["dbt test"]}]}
        self.next_id = 100
        a = rf"/api/v[23]/accounts/{ACCOUNT}"
        api.route("GET", rf"{a}/projects")(self.list_projects)
        api.route("POST", rf"{a}/projects")(self.create_project)
        api.route("DELETE", rf"{a}/projects/(\d+)")(self.delete_project)
        api.route("GET", rf"/api/v3/accounts/{ACCOUNT}/projects/(\d+)/environments")(self.list_envs)
        api.route("GET", rf"/api/v2/accounts/{ACCOUNT}/jobs")(self.list_jobs)
        self.api = api

    @staticmethod
    def authorized(req):
        return req.headers.get("authorization") == f"Token {TOKEN}"

    def denied(self):
        return 401, {"status": {"code": 401, "is_success": False, "user_message": "Invalid token.",
                                "developer_message": ""}, "data": None}

    def page(self, req, items):
        offset, limit = int(req.query.get("offset", 0)), int(req.query.get("limit", 100))
        return 200, envelope(items[offset:offset + limit], total=len(items))

    def list_projects(self, req, m):
        return self.denied() if not self.authorized(req) else self.page(req, self.projects)

    def create_project(self, req, m):
        if not self.authorized(req):
            return self.denied()
        body = req.json()
        project = {"id": self.next_id, "account_id": body["account_id"], "name": body["name"], "connection": None}
        self.next_id += 1
        self.projects.append(project)
        return 201, envelope(project)

    def delete_project(self, req, m):
        if not self.authorized(req):
            return self.denied()
        pid = int(m.group(1))
        if not any(p["id"] == pid for p in self.projects):
            return 404, {"status": {"code": 404, "is_success": False, "user_message": "Not found.",
                                    "developer_message": ""}, "data": None}
        self.projects = [p for p in self.projects if p["id"] != pid]
        return 200, envelope({"id": pid, "state": 2})

    def list_envs(self, req, m):
        return self.denied() if not self.authorized(req) else self.page(req, self.environments.get(int(m.group(1)), []))

    def list_jobs(self, req, m):
        if not self.authorized(req):
            return self.denied()
        return self.page(req, self.jobs.get(int(req.query["project_id"]), []))


@pytest.fixture
def dbt(fake_api, cloud_ctx):
    state = DbtCloudState(fake_api)
    cloud_ctx.write_settings(SETTINGS, {"account_id": str(ACCOUNT), "token": TOKEN, "base_url": fake_api.url})
    return state, cloud_ctx


def test_project_info(dbt):
    state, ctx = dbt
    assert GETTERS["dbt_project_info"](ctx, fields=["name", "connection_type"]) == "Analytics bigquery "
    state.projects[0]["connection"] = None
    assert GETTERS["dbt_project_info"](ctx, fields=["connection_type"]) == "None "
    state.projects.clear()
    assert GETTERS["dbt_project_info"](ctx, fields=["name"]) == "None"


def test_environment_info(dbt):
    _, ctx = dbt
    assert GETTERS["dbt_environment_info"](ctx, name="Production", fields=["type", "dbt_version"]) == \
        "deployment 1.7.0-latest "
    assert GETTERS["dbt_environment_info"](ctx, fields=["type"]) == "development "  # default name
    assert GETTERS["dbt_environment_info"](ctx, name="Staging", fields=["type"]) == "None"


def test_job_info(dbt):
    _, ctx = dbt
    get = GETTERS["dbt_job_info"]
    assert get(ctx, name="Daily build", fields=["time_type", "time_hours", "execute_steps"]) == \
        "at_exact_hours [6] ['dbt build'] "
    assert get(ctx, fields=["job_completion_trigger_condition"], prev_name="Daily build") == "matched 10 20  "
    assert get(ctx, fields=["job_completion_trigger_condition"], prev_name="Other") == "mismatched 10 20  "
    assert get(ctx, name="Daily build", fields=["job_completion_trigger_condition"]) == "None"
    assert get(ctx, name="Nope", fields=["name"]) == "None"


def test_init_creates_and_deletes_projects(dbt, fake_api):
    state, ctx = dbt
    SETUP_STEPS["dbt_cloud_init"](ctx, actions=[{"type": "delete_project"}, {"type": "create_project",
                                                                             "project_name": "Jaffle"}])
    assert [p["name"] for p in state.projects] == ["Jaffle"]
    created = [r for r in fake_api.requests if r.method == "POST"][0]
    assert created.path == f"/api/v3/accounts/{ACCOUNT}/projects/" and created.json()["name"] == "Jaffle"
    SETUP_STEPS["dbt_cloud_init"](ctx, actions=[{"type": "create_project"}])
    assert state.projects[-1]["name"] == "Analytics"


def test_unknown_action_is_refused(dbt):
    _, ctx = dbt
    with pytest.raises(Exception, match="'rename_project' is not a dbt_cloud_init action"):
        SETUP_STEPS["dbt_cloud_init"](ctx, actions=[{"type": "rename_project"}])


def test_bad_token_raises_not_scores(dbt):
    _, ctx = dbt
    ctx.write_settings(SETTINGS, {"account_id": str(ACCOUNT), "token": "wrong", "base_url": dbt[0].api.url})
    with pytest.raises(CloudAPIError, match="credentials refused") as ei:
        GETTERS["dbt_job_info"](ctx, fields=["name"])
    assert ei.value.status == 401


def test_missing_token_names_the_field(dbt):
    _, ctx = dbt
    ctx.write_settings(SETTINGS, {"account_id": str(ACCOUNT)})
    with pytest.raises(Exception, match=r"dbt_cloud/settings.json, field 'token'.*'token' or 'api_token'"):
        GETTERS["dbt_project_info"](ctx, fields=["name"])


def test_pagination_follows_offsets(fake_api):
    state = DbtCloudState(fake_api)
    state.projects = [{"id": i, "name": f"p{i}"} for i in range(PAGE_LIMIT + 5)]
    with DbtCloudClient(ACCOUNT, TOKEN, fake_api.url) as client:
        assert len(client.list_projects()) == PAGE_LIMIT + 5
    offsets = [r.query["offset"] for r in fake_api.requests]
    assert offsets == ["0", str(PAGE_LIMIT)]
