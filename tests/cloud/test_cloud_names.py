"""Every cloud-account name either works against a vendor's real API shape (a named test in this folder)
or fails with a precise message; without a settings file the working ones name the file to fill in."""
from __future__ import annotations

import importlib
import json

import pytest

from desktop_env.configs import accounts
from desktop_env.session import AccountRequired, NotSupportedError, ToolNotInImage
from desktop_env.registry import ACCOUNT, GETTERS, SETUP_STEPS, SUPPORTED, UNAVAILABLE

#: name -> "module::test" exercising it against a local server speaking the vendor's wire format
WIRE_TESTED = {
    "bigquery_init": "test_bigquery::test_init_empty_create_and_copy_keyfile",
    "bigquery_table_to_csv": "test_bigquery::test_table_to_csv",
    "bigquery_sql_result_to_csv": "test_bigquery::test_sql_result_to_csv",
    "bigquery_datasets": "test_bigquery::test_datasets_and_connections",
    "bigquery_connections": "test_bigquery::test_datasets_and_connections",
    "snowflake_init": "test_snowflake::test_init_actions",
    "snowflake_table_to_csv": "test_snowflake::test_table_to_csv",
    "snowflake_execution_result": "test_snowflake::test_execution_result",
    "snowflake_user_info": "test_snowflake::test_user_and_warehouse_info",
    "snowflake_warehouse_info": "test_snowflake::test_user_and_warehouse_info",
    "snowflake_function_result": "test_snowflake::test_function_log_and_schema",
    "snowflake_log_message": "test_snowflake::test_function_log_and_schema",
    "snowflake_database_schema_to_csv": "test_snowflake::test_function_log_and_schema",
    "snowflake_database_schema_info": "test_snowflake::test_function_log_and_schema",
    "dbt_cloud_init": "test_dbt_cloud::test_init_creates_and_deletes_projects",
    "dbt_project_info": "test_dbt_cloud::test_project_info",
    "dbt_environment_info": "test_dbt_cloud::test_environment_info",
    "dbt_job_info": "test_dbt_cloud::test_job_info",
    "dbt_profiles": "test_dbt_profiles::test_dbt_profiles_from_the_guest",
    "googledrive_init": "test_googledrive::test_init_mkdirs_upload_delete",
    "googledrive": "test_googledrive::test_general_suite_spelling",
    "googlesheet_active_file": "test_googledrive::test_googlesheet_active_file",
}

#: the names of the brief (COMPAT section 2's account rows and cloud getters)
EXPECTED = set("""bigquery_init bigquery_login snowflake_init snowflake_login snowflake_write_sqls_in_new_worksheet
snowflake_delete_folder snowflake_delete_filter dbt_cloud_init dbt_cloud_webui_login workarena_task_init
workarena_unique_fields googledrive_init googledrive_login googledrive login hasura_login bigquery_table_to_csv
bigquery_sql_result_to_csv bigquery_datasets bigquery_connections snowflake_table_to_csv dbt_job_info
dbt_project_info dbt_environment_info dbt_profiles metabase_question_sql googlesheet_active_file
workarena_task_result""".split())

CLOUD_MODULES = ("desktop_env.configs.accounts", "desktop_env.evaluators.getters.cloud")


def cloud_entries():
    out = []
    for kind, reg in (("setup", SETUP_STEPS), ("getter", GETTERS)):
        for name in reg.names():
            entry = reg.get(name)
            if entry.func.__module__ in CLOUD_MODULES:
                out.append(pytest.param(kind, entry, id=f"{kind}:{name}"))
    return out


ENTRIES = cloud_entries()


def test_every_name_of_the_brief_is_here():
    names = {p.values[1].name for p in ENTRIES}
    assert EXPECTED <= names, EXPECTED - names
    assert {n for n in names if n.startswith("snowflake_")} >= {"snowflake_user_info", "snowflake_log_message"}


@pytest.mark.parametrize("kind,entry", ENTRIES)
def test_works_against_an_api_shape_or_fails_precisely(kind, entry, cloud_ctx):
    if entry.status in (ACCOUNT, SUPPORTED):
        # works: a test in this folder drives it through a local server speaking the vendor's wire format
        module, test = WIRE_TESTED[entry.name].split("::")
        assert callable(getattr(importlib.import_module(module), test)), WIRE_TESTED[entry.name]
        if entry.status == SUPPORTED:
            return
        # and without a settings file it names the file to fill in, before touching anything
        fields = {f: "x" for f in entry.required}
        if entry.name == "snowflake_execution_result":  # arguments are checked first: give a valid pair
            fields["sql_command"] = "SELECT 1"
        with pytest.raises(AccountRequired) as ei:
            entry.func(cloud_ctx, **fields)
        assert ei.value.settings_file.startswith("evaluation_examples/settings/")
        assert ei.value.template == ei.value.settings_file + ".template"
        assert ei.value.template in str(ei.value) and "never committed" in str(ei.value)
        return
    assert entry.status == UNAVAILABLE and entry.name not in WIRE_TESTED
    assert entry.note, "an unavailable name says why in tasks check"
    if entry.name == "workarena_task_init":  # checks the instance first: see test_servicenow
        with pytest.raises(AccountRequired, match="servicenow/settings.json"):
            entry.func(cloud_ctx)
        return
    for vendor in accounts.VENDORS.values():  # settings present: still refused, with the reason
        cloud_ctx.write_settings(vendor[1], {"filled": True})
    with pytest.raises(NotSupportedError) as ei:
        entry.func(cloud_ctx)
    message = str(ei.value)
    assert entry.name in message
    if isinstance(ei.value, ToolNotInImage):
        assert "not installed in any image" in message
    else:
        assert "cannot" in message and accounts.DOCS in message


def test_templates_are_json_with_the_fields_the_clients_read():
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    import yaml
    for path in accounts.template_paths(root):
        data = yaml.safe_load(path.read_text()) if ".yml" in path.name else json.loads(path.read_text())
        assert data, path
    gcp = json.loads((root / accounts.VENDORS["bigquery"][1]).with_suffix(".json.template").read_text())
    assert {"project_name", "project_id", "keyfile_path"} <= set(gcp[0])
    snow = json.loads((root / accounts.VENDORS["workarena"][1]).with_suffix(".json.template").read_text())
    assert {"SNOW_INSTANCE_URL", "SNOW_INSTANCE_UNAME", "SNOW_INSTANCE_PWD"} <= set(snow)


def test_settings_that_are_not_json_say_where(cloud_ctx):
    target = cloud_ctx.root / accounts.VENDORS["dbt_cloud"][1]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('{\n  "account_id": "1", // mine\n}')
    with pytest.raises(Exception, match=r"dbt_cloud/settings.json: not valid JSON .* line 2.*no comments"):
        GETTERS["dbt_job_info"](cloud_ctx, fields=["name"])
