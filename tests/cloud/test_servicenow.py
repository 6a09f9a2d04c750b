"""The ServiceNow Table API client against a local server, and the WorkArena steps' precise refusals."""
from __future__ import annotations

import base64

import pytest

from desktop_env.cloud.base import CloudAPIError
from desktop_env.cloud.servicenow import ServiceNowClient
from desktop_env.session import AccountRequired, NotSupportedError
from desktop_env.registry import SETUP_STEPS

SETTINGS = "evaluation_examples/settings/servicenow/settings.json"


@pytest.fixture
def instance(fake_api):
    """A Table API with basic auth admin:secret and a sys_user table."""
    users = [{"sys_id": "6816f79cc0a8016401c5a33be04be441", "user_name": "admin", "name": "System Administrator"},
             {"sys_id": "46d44a23a9fe19810012d100cca80666", "user_name": "beth.anglin", "name": "Beth Anglin"}]
    good = "Basic " + base64.b64encode(b"admin:secret").decode()

    @fake_api.route("GET", r"/api/now/table/(\w+)")
    def table(req, m):
        if req.headers.get("authorization") != good:
            return 401, {"error": {"message": "User Not Authenticated",
                                   "detail": "Required to provide Auth information"}, "status": "failure"}
        if m.group(1) != "sys_user":
            return 400, {"error": {"message": "Invalid table", "detail": None}, "status": "failure"}
        rows = users
        if "sysparm_query" in req.query:
            key, value = req.query["sysparm_query"].split("=", 1)
            rows = [u for u in rows if u.get(key) == value]
        if "sysparm_fields" in req.query:
            keep = req.query["sysparm_fields"].split(",")
            rows = [{k: v for k, v in u.items() if k in keep} for u in rows]
        return 200, {"result": rows[:int(req.query.get("sysparm_limit", 10000))]}
    return fake_api


def test_table_query(instance):
    with ServiceNowClient(instance.url, "admin", "secret") as client:
        assert client.table("sys_user", "user_name=beth.anglin", ["user_name"]) == [{"user_name": "beth.anglin"}]
        assert client.check_login()["sys_id"] == "6816f79cc0a8016401c5a33be04be441"
    req = instance.requests[0]
    assert req.query["sysparm_query"] == "user_name=beth.anglin" and req.query["sysparm_fields"] == "user_name"


def test_wrong_password(instance):
    with ServiceNowClient(instance.url, "admin", "nope") as client, \
            pytest.raises(CloudAPIError, match="credentials refused") as ei:
        client.check_login()
    assert ei.value.status == 401 and "User Not Authenticated" in ei.value.body


def test_workarena_task_init_checks_the_instance_then_refuses(instance, cloud_ctx):
    with pytest.raises(AccountRequired, match="servicenow/settings.json"):
        SETUP_STEPS["workarena_task_init"](cloud_ctx, task_name="CreateUserTask")
    cloud_ctx.write_settings(SETTINGS, {"SNOW_INSTANCE_URL": instance.url, "SNOW_INSTANCE_UNAME": "admin",
                                        "SNOW_INSTANCE_PWD": "secret"})
    with pytest.raises(NotSupportedError, match="accepted the credentials, but WorkArena tasks are generated"):
        SETUP_STEPS["workarena_task_init"](cloud_ctx, task_name="CreateUserTask")
    assert instance.requests[-1].path == "/api/now/table/sys_user"
    cloud_ctx.write_settings(SETTINGS, {"SNOW_INSTANCE_URL": instance.url, "SNOW_INSTANCE_UNAME": "admin",
                                        "SNOW_INSTANCE_PWD": "wrong"})
    with pytest.raises(CloudAPIError, match="ServiceNow.*credentials refused"):
        SETUP_STEPS["workarena_task_init"](cloud_ctx, task_name="CreateUserTask")
