"""is_snowflake_user_created and check_snowflake_log_message on what the Snowflake getters read through
snowflake-connector-python from the local server speaking its REST wire protocol (see test_snowflake.py)."""
from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("snowflake.connector")

from test_snowflake import SETTINGS, TEXT, SnowflakeState  # noqa: E402  (tests/cloud is on sys.path)

from desktop_env.cloud.base import CloudAPIError  # noqa: E402
from desktop_env.session import AccountRequired  # noqa: E402
from desktop_env.evaluators.evaluator import judge  # noqa: E402
from desktop_env.evaluators.metrics.utils import MetricError  # noqa: E402
from desktop_env.evaluators.reasons import MISSING_RESULT, PASSED, RULE_FAILED, VALUE_MISMATCH  # noqa: E402
from desktop_env.registry import ACCOUNT, GETTERS, METRICS  # noqa: E402
from desktop_env.tasks import load_task  # noqa: E402

#: the public suite's user-creation task's expected rule
SNOWMAN = {"NAME": "SNOWMAN", "LOGIN_NAME": "SNOWSTORM", "FIRST_NAME": "Snow", "LAST_NAME": "Storm",
           "EMAIL": "snow.storm@snowflake.com", "MUST_CHANGE_PASSWORD": "false", "DISABLED": "false",
           "SNOWFLAKE_LOCK": "false", "DEFAULT_WAREHOUSE": "COMPUTE_WH", "PASSWORD": "20!4@sn0wf@ll",
           "ROLE": "SYSADMIN"}


class Account(SnowflakeState):
    """The fake account with one password per login name (the owner's is ``secret``) and a user SNOWMAN."""

    def __init__(self, api):
        super().__init__(api)
        self.passwords = {"tester": "secret", "SNOWSTORM": SNOWMAN["PASSWORD"]}
        self.snowman = {k: v for k, v in SNOWMAN.items() if k not in ("PASSWORD", "ROLE")}
        self.roles = ["SYSADMIN"]
        self.answers[:0] = [
            (r"DESC USER SNOWMAN", lambda m: (["property", "value", "default", "description"], [TEXT] * 4,
                                              [[k, v, "null", ""] for k, v in self.snowman.items()]
                                              + [["PASSWORD", "****", "null", ""]])),
            (r"SHOW GRANTS TO USER SNOWMAN", lambda m: (["created_on", "role", "granted_to", "grantee_name"],
                                                        [TEXT] * 4, [["2024-01-01", r, "USER", "SNOWMAN"]
                                                                     for r in self.roles])),
        ]

    def login(self, req, m):
        self.password = self.passwords.get(req.json()["data"]["LOGIN_NAME"], "not this one")
        return super().login(req, m)


@pytest.fixture
def account(fake_api, cloud_ctx):
    state = Account(fake_api)
    port = int(fake_api.url.rsplit(":", 1)[1])
    cloud_ctx.write_settings(SETTINGS, {"account": "https://xy12345.snowflakecomputing.com", "user": "tester",
                                        "password": "secret", "role": "ACCOUNTADMIN", "warehouse": "COMPUTE_WH",
                                        "host": "127.0.0.1", "port": port, "protocol": "http", "login_timeout": 20})
    return state, cloud_ctx


def user_created(ctx, expected, **options):
    info = GETTERS["snowflake_user_info"](ctx, username="SNOWMAN")
    return METRICS["is_snowflake_user_created"](info, expected, **options)


def test_user_created_with_its_password_and_role(account, monkeypatch):
    state, ctx = account
    settings = str(ctx.root / SETTINGS)
    assert user_created(ctx, SNOWMAN, settings_file=settings) == 1.0
    login = state.logins[-1]
    assert (login["LOGIN_NAME"], login["PASSWORD"]) == ("SNOWSTORM", SNOWMAN["PASSWORD"])
    assert state.logins[0]["query"]["roleName"] == "ACCOUNTADMIN"  # the getter, as the owner
    assert "roleName" not in login["query"]  # the owner's role is not the new user's
    # the task's relative settings path, from the suite root; booleans and key case as a task may write them
    monkeypatch.chdir(ctx.root)
    lenient = {**{k.lower(): v for k, v in SNOWMAN.items()}, "disabled": False, "role": ["sysadmin", "PUBLIC"]}
    assert user_created(ctx, lenient, settings_file=SETTINGS) == 1.0
    assert user_created(ctx, SNOWMAN) == 1.0  # default settings file


def test_user_with_another_password_role_or_property_fails(account):
    state, ctx = account
    settings = str(ctx.root / SETTINGS)
    assert user_created(ctx, {**SNOWMAN, "PASSWORD": "guess"}, settings_file=settings) == 0.0
    assert state.logins[-1]["LOGIN_NAME"] == "SNOWSTORM"
    logins = len(state.logins)
    assert user_created(ctx, {**SNOWMAN, "EMAIL": "other@snowflake.com"}, settings_file=settings) == 0.0
    state.roles = ["ANALYST"]
    assert user_created(ctx, SNOWMAN, settings_file=settings) == 0.0
    assert len(state.logins) == logins + 2  # the two getter calls: no password tried once a property failed
    state.roles = ["SYSADMIN"]
    state.passwords["SNOWSTORM"] = "changed later"
    assert user_created(ctx, SNOWMAN, settings_file=settings) == 0.0
    assert METRICS["is_snowflake_user_created"](None, SNOWMAN, settings_file=settings) == 0.0


def test_reasons_name_what_did_not_hold(account):
    _, ctx = account
    settings = str(ctx.root / SETTINGS)
    info = GETTERS["snowflake_user_info"](ctx, username="SNOWMAN")
    metric = METRICS["is_snowflake_user_created"]
    v = judge("is_snowflake_user_created", metric, info, SNOWMAN, settings_file=settings)
    assert v == 1.0 and v.reason.kind == PASSED
    v = judge("is_snowflake_user_created", metric, info, {**SNOWMAN, "PASSWORD": "guess"}, settings_file=settings)
    assert (float(v), v.reason.kind) == (0.0, RULE_FAILED)
    assert "user 'SNOWSTORM' cannot log in with the expected password" in v.reason.text
    v = judge("is_snowflake_user_created", metric, info, {**SNOWMAN, "LAST_NAME": "Flake"}, settings_file=settings)
    assert v.reason.kind == VALUE_MISMATCH and "LAST_NAME: expected 'Flake', got 'Storm'" in v.reason.text
    v = judge("check_snowflake_log_message", METRICS["check_snowflake_log_message"],
              GETTERS["snowflake_log_message"](ctx, database="DB", table="EVENTS", logger="other", wait_s=0),
              {"severity": "INFO", "message": "x"})
    assert v.reason.kind == MISSING_RESULT and "no log record arrived" in v.reason.text


def test_user_created_needs_the_settings_only_for_a_password(account, tmp_path):
    _, ctx = account
    missing = str(tmp_path / "nowhere.json")
    assert user_created(ctx, {k: v for k, v in SNOWMAN.items() if k != "PASSWORD"}, settings_file=missing) == 1.0
    with pytest.raises(AccountRequired, match="nowhere.json"):
        user_created(ctx, SNOWMAN, settings_file=missing)
    with pytest.raises(MetricError, match="expects a rule"):
        METRICS["is_snowflake_user_created"]({"NAME": "SNOWMAN"}, ["SNOWMAN"])


def test_unreachable_account_raises_not_scores(account, monkeypatch):
    state, ctx = account
    info = GETTERS["snowflake_user_info"](ctx, username="SNOWMAN")
    settings = json.loads((ctx.root / SETTINGS).read_text())
    # the account's endpoint answers, but not as Snowflake: the login fails without any refusal
    ctx.write_settings(SETTINGS, {**settings, "account": "elsewhere", "login_timeout": 3})
    state.api.routes.insert(0, ("POST", re.compile(r"/session/v1/login-request/?$"),
                                lambda req, m: (200, b"<html>maintenance</html>")))
    with pytest.raises(CloudAPIError, match="could not connect to account 'elsewhere'"):
        METRICS["is_snowflake_user_created"](info, SNOWMAN, settings_file=str(ctx.root / SETTINGS))


def test_log_message(account):
    state, ctx = account
    expected = {"severity": "INFO", "message": "Logging from Python function."}
    found = GETTERS["snowflake_log_message"](ctx, database="DB", table="EVENTS", logger="udf_logger")
    assert METRICS["check_snowflake_log_message"](found, expected) == 1.0
    assert METRICS["check_snowflake_log_message"](found, {**expected, "severity": "WARN"}) == 0.0
    assert METRICS["check_snowflake_log_message"](found, {**expected, "message": "Logging from SQL."}) == 0.0
    missing = GETTERS["snowflake_log_message"](ctx, database="DB", table="EVENTS", logger="other", wait_s=0)
    assert missing is None and METRICS["check_snowflake_log_message"](missing, expected) == 0.0
    with pytest.raises(MetricError, match="severity, message"):
        METRICS["check_snowflake_log_message"](found, {"message": "Logging from Python function."})


@pytest.mark.parametrize("name", ["is_snowflake_user_created", "check_snowflake_log_message"])
def test_registered_as_account_metrics(name):
    assert METRICS.get(name).status == ACCOUNT


def test_tasks_of_the_public_suite_load(cloud_ctx):
    folder = cloud_ctx.task.task_dir
    evaluators = {
        "user": {"func": "is_snowflake_user_created",
                 "result": {"type": "snowflake_user_info", "settings_file": SETTINGS, "username": "snowman"},
                 "expected": {"type": "rule", "rules": SNOWMAN}, "options": {"settings_file": SETTINGS}},
        "log": {"func": ["exact_match", "check_snowflake_log_message"],
                "result": [{"type": "snowflake_function_result", "settings_file": SETTINGS, "database": "log_trace_db",
                            "table": "event_table", "function": "log_trace_data"},
                           {"type": "snowflake_log_message", "settings_file": SETTINGS, "database": "log_trace_db",
                            "table": "event_table", "logger": "logger"}],
                "expected": [{"type": "rule", "rules": {"expected": "SUCCESS"}},
                             {"type": "rule", "rules": {"severity": "INFO",
                                                        "message": "Logging from Python function."}}]},
    }
    for key, evaluator in evaluators.items():
        path = folder / f"{key}.json"
        path.write_text(json.dumps({"id": cloud_ctx.task.id, "instruction": "x", "config": [],
                                    "evaluator": {"postconfig": [], **evaluator}}))
        load_task(path)
