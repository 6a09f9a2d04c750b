"""Cloud accounts: which settings file each vendor's steps, getters and metrics read, and the clients made
from it (BigQuery, Snowflake, dbt Cloud, Google Drive). Setup steps (desktop_env.configs.accounts),
getters and metrics all come here for a client."""
from __future__ import annotations

import logging
from pathlib import Path

from desktop_env.cloud.base import Settings
from desktop_env.session import AccountRequired, SetupContext

logger = logging.getLogger(__name__)

#: vendor -> (display name, default settings file relative to the suite root: the existing suite's paths)
VENDORS: dict[str, tuple[str, str]] = {
    "bigquery": ("Google BigQuery", "evaluation_examples/settings/google/gcp_config.json"),
    "snowflake": ("Snowflake", "evaluation_examples/settings/snowflake/settings.json"),
    "dbt_cloud": ("dbt Cloud", "evaluation_examples/settings/dbt_cloud/settings.json"),
    "workarena": ("ServiceNow (WorkArena)", "evaluation_examples/settings/servicenow/settings.json"),
    "googledrive": ("Google Drive", "evaluation_examples/settings/googledrive/settings.yml"),
    "google": ("Google account", "evaluation_examples/settings/google/settings.json"),
    "hasura": ("Hasura Cloud", "evaluation_examples/settings/hasura_cloud/settings.json"),
}

DOCS = "docs/cloud.md"


def settings_file_for(vendor: str, params: dict) -> str:
    """The settings file a step or getter reads: its ``settings_file``/``config_file`` field, else the vendor's default."""
    for key in ("settings_file", "config_file"):
        if isinstance(params.get(key), str) and params[key]:
            return params[key]
    return VENDORS[vendor][1]


def _resolver(ctx: SetupContext | None):
    def resolve(rel: str) -> Path:
        if ctx is None or ctx.task is None:
            return Path(rel).expanduser()
        candidates = ctx.task.path_candidates(rel, ctx.suite_root)
        return next((c for c in candidates if c.exists()), candidates[0])
    return resolve


def load_settings(ctx: SetupContext | None, vendor: str, params: dict, name: str) -> Settings:
    """Find and parse the settings file of ``vendor`` for the step or getter ``name``.

    Paths resolve like task paths: the suite root first, then the task folder.

    Raises:
        AccountRequired: the settings file is missing (the message names it and its template).
        desktop_env.cloud.base.SettingsError: it is not valid JSON.
    """
    display, _ = VENDORS[vendor]
    rel = settings_file_for(vendor, params)
    found = None
    if ctx is not None and ctx.task is not None:
        found = next((c for c in ctx.task.path_candidates(rel, ctx.suite_root) if c.is_file()), None)
    if found is None:
        template = rel + ".template"
        raise AccountRequired(
            f"this task needs a real {display} account: fill in {rel} (relative to the suite root; "
            f"copy {template} and put your credentials in it — it is never committed; see {DOCS})",
            settings_file=rel, template=template, step=name)
    logger.info("%s: using %s settings from %s", name, display, found)
    return Settings.read(found, _resolver(ctx), step=name)


def bigquery_for(ctx: SetupContext | None, params: dict, name: str):
    """A :class:`desktop_env.cloud.bigquery.BigQuery` for the project the step or getter names."""
    from desktop_env.cloud.bigquery import BigQuery, select_project
    settings = load_settings(ctx, "bigquery", params, name)
    project = select_project(settings, params.get("project_name"), params.get("project_index"))
    return BigQuery(project, step=name)


def snowflake_for(ctx: SetupContext | None, params: dict, name: str, **overrides):
    """A connected :class:`desktop_env.cloud.snowflake.Snowflake` (and the settings it came from)."""
    from desktop_env.cloud.snowflake import Snowflake, connect_args
    settings = load_settings(ctx, "snowflake", params, name)
    return Snowflake(connect_args(settings, **overrides), step=name), settings


def dbt_cloud_for(ctx: SetupContext | None, params: dict, name: str):
    """A :class:`desktop_env.cloud.dbt_cloud.DbtCloudClient` from the dbt Cloud settings file."""
    from desktop_env.cloud.dbt_cloud import DbtCloudClient
    return DbtCloudClient.from_settings(load_settings(ctx, "dbt_cloud", params, name))


def drive_for(ctx: SetupContext | None, params: dict, name: str):
    """A :class:`desktop_env.cloud.googledrive.Drive` for the account of the Drive settings file."""
    from desktop_env.cloud.googledrive import Drive
    return Drive.from_settings(load_settings(ctx, "googledrive", params, name))


WORKARENA_MISSING = ("WorkArena tasks are generated (random records, a start page) and validated by the task "
                     "classes of the browsergym-workarena package driving the browser with Playwright; this "
                     "project does not embed them, so WorkArena tasks cannot be set up or scored here")
