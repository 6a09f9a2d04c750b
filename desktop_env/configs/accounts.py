"""Cloud-account setup steps: settings files, vendor API steps, and registered refusals for web-UI-only steps."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from desktop_env.cloud.accounts import (DOCS, VENDORS, WORKARENA_MISSING, bigquery_for, dbt_cloud_for, drive_for,
                                        load_settings, snowflake_for)
from desktop_env.session import NotSupportedError, SetupContext, SetupError
from desktop_env.registry import ACCOUNT, SETUP_STEPS, UNAVAILABLE

logger = logging.getLogger(__name__)

def _actions(actions: Any, name: str, known: tuple[str, ...]) -> list[dict]:
    """``actions`` checked before any account is contacted: a list of ``{"type": one of known, ...}``."""
    if actions is None:
        return []
    if not isinstance(actions, list) or not all(isinstance(a, dict) and "type" in a for a in actions):
        raise SetupError("'actions' must be a list of objects, each with a 'type'", step=name)
    for i, action in enumerate(actions):
        if action["type"] not in known:
            raise SetupError(f"actions[{i}].type {action['type']!r} is not a {name} action; expected one of "
                             f"{', '.join(known)}", step=name)
    return actions


# -- steps that drive a vendor website: registered, never run ------------------------------------
#: step name -> (vendor, what it does in the browser)
BROWSER_ONLY_STEPS: dict[str, tuple[str, str]] = {
    "bigquery_login": ("bigquery", "signs in to the Google Cloud console (console.cloud.google.com)"),
    "snowflake_login": ("snowflake", "signs in to Snowsight (app.snowflake.com)"),
    "snowflake_write_sqls_in_new_worksheet": ("snowflake", "types SQL into a new Snowsight worksheet"),
    "snowflake_delete_folder": ("snowflake", "deletes worksheet folders in the Snowsight UI"),
    "snowflake_delete_filter": ("snowflake", "deletes worksheet filters in the Snowsight UI"),
    "dbt_cloud_webui_login": ("dbt_cloud", "signs in to the dbt Cloud website (cloud.getdbt.com)"),
    "googledrive_login": ("googledrive", "signs in to Google Drive in the browser"),
    "login": ("google", "signs in to a Google account in the browser"),
    "hasura_login": ("hasura", "signs in to the Hasura Cloud console (cloud.hasura.io)"),
}

#: step name -> (vendor, why it cannot run)
MISSING_STEPS: dict[str, tuple[str, str]] = {
    "workarena_unique_fields": ("workarena", "it reads the record that workarena_task_init generated, and "
                                "WorkArena task generation is not available (see workarena_task_init)"),
}


def browser_only_message(name: str, vendor: str, what: str) -> str:
    """The NotSupportedError text of a step that only drives a vendor's website."""
    return (f"'{name}' {what} by typing credentials into the {VENDORS[vendor][0]} website in the VM's "
            f"browser; this project does not automate vendor websites (they cannot be run or tested offline "
            f"and change without notice), so this task cannot be set up here — see {DOCS}")


def _make_unavailable(name: str, message: str):
    def step(ctx: SetupContext, **params) -> None:
        raise NotSupportedError(message, step=name)
    step.__name__ = step.__qualname__ = name
    step.__doc__ = f"'{name}': registered so tasks load; cannot run ({message})."
    return step


for _name, (_vendor, _what) in BROWSER_ONLY_STEPS.items():
    _msg = browser_only_message(_name, _vendor, _what)
    SETUP_STEPS.register(_name, status=UNAVAILABLE, note=f"drives the {VENDORS[_vendor][0]} website in the "
                         "browser; not supported")(_make_unavailable(_name, _msg))
for _name, (_vendor, _why) in MISSING_STEPS.items():
    SETUP_STEPS.register(_name, status=UNAVAILABLE, note=_why)(
        _make_unavailable(_name, f"{VENDORS[_vendor][0]} step '{_name}' cannot run: {_why}; see {DOCS}"))


# -- BigQuery ------------------------------------------------------------------------------------
@SETUP_STEPS.register(status=ACCOUNT, note=f"needs a Google BigQuery account ({VENDORS['bigquery'][1]})")
def bigquery_init(ctx: SetupContext, config_file: str | None = None, settings_file: str | None = None,
                  project_name: str | None = None, project_index: int | None = None,
                  actions: list | None = None) -> None:
    """Prepare a BigQuery project with the service account of the settings file.

    Args:
        config_file: the Google Cloud settings file (default ``settings/google/gcp_config.json``).
        project_name: the entry of that file to use (or ``project_index``).
        actions: in order, each ``{"type": ...}``:
            ``empty`` deletes every dataset (tables, routines, models) and the job history;
            ``create_table`` creates ``dataset_id``.``table_id`` with an optional ``schema_from_json``
            (``[{"name", "type", "mode"}]``) and loads ``data_from_csv`` (URL or task path);
            ``copy_keyfile`` copies the service-account key into the VM at ``dest``
            (default ``/home/user/keyfile.json``).

    Raises:
        AccountRequired: no settings file. CloudAPIError: BigQuery refused a request.
        SetupError: an unknown action or a failed API call.
    """
    name = "bigquery_init"
    params = {"config_file": config_file, "settings_file": settings_file, "project_name": project_name,
              "project_index": project_index}
    acts = _actions(actions, name, ("empty", "create_table", "copy_keyfile"))
    with bigquery_for(ctx, params, name) as bq:
        for i, action in enumerate(acts):
            kind = action["type"]
            if kind == "empty":
                bq.empty_project()
            elif kind == "create_table":
                csv_path = None
                if action.get("data_from_csv"):
                    from desktop_env.configs.steps import fetch_bytes
                    csv_path = ctx.cache_path(f"bigquery/{action['dataset_id']}.{action['table_id']}.csv")
                    csv_path.write_bytes(fetch_bytes(action["data_from_csv"], ctx))
                try:
                    bq.create_table(action["dataset_id"], action["table_id"], action.get("schema_from_json"),
                                    csv_path)
                except KeyError as exc:
                    raise SetupError(f"actions[{i}] (create_table) needs the field {exc}", step=name) from None
            else:  # copy_keyfile
                dest = action.get("dest", "/home/user/keyfile.json")
                ctx.controller.upload_file(bq.project.keyfile.read_bytes(), dest)


# -- Snowflake -----------------------------------------------------------------------------------
@SETUP_STEPS.register(status=ACCOUNT, note=f"needs a Snowflake account ({VENDORS['snowflake'][1]})")
def snowflake_init(ctx: SetupContext, settings_file: str | None = None, actions: list | None = None) -> None:
    """Prepare a Snowflake account through the connector.

    Args:
        settings_file: default ``settings/snowflake/settings.json`` (``account``, ``user``, ``password``,
            optionally ``role``, ``warehouse``).
        actions: in order, each ``{"type": ...}``: ``execute_script`` (``sql_command`` str or list, or
            ``sql_script`` task path; ``query_ids_path`` saves the query ids in the cache folder),
            ``delete_user`` (``username``, default all but the current user), ``delete_database``
            (``database``, default all but the system ones), ``delete_warehouse`` (``warehouse``, default
            all but COMPUTE_WH), ``create_database`` (``database``, ``schema``, ``delete_first``),
            ``create_table`` (``database``, ``schema``, ``table``, ``sql``), ``copy_keyfile`` (copies the
            settings file into the VM at ``dest``, default ``/home/user/keyfile.json``).

    Raises:
        AccountRequired, CloudAPIError, SetupError (an unknown action, a failed statement).
    """
    from desktop_env.cloud import snowflake as sfmod
    name = "snowflake_init"
    acts = _actions(actions, name, ("execute_script", "delete_user", "delete_database", "delete_warehouse",
                                    "create_database", "create_table", "copy_keyfile"))
    sf, settings = snowflake_for(ctx, {"settings_file": settings_file}, name)
    with sf:
        for i, action in enumerate(acts):
            kind, args = action["type"], {k: v for k, v in action.items() if k != "type"}
            try:
                if kind == "execute_script":
                    if args.get("sql_script"):
                        statements = sfmod.split_sql_script(ctx.resolve(args["sql_script"]).read_text())
                    else:
                        cmd = args["sql_command"]
                        statements = [cmd] if isinstance(cmd, str) else list(cmd)
                    ids = sf.execute_many(statements)
                    if args.get("query_ids_path"):
                        ctx.cache_path(args["query_ids_path"]).write_text("".join(q + "\n" for q in ids))
                elif kind == "delete_user":
                    sfmod.delete_users(sf, args.get("username"))
                elif kind == "delete_database":
                    sfmod.delete_databases(sf, args.get("database"))
                elif kind == "delete_warehouse":
                    sfmod.delete_warehouses(sf, args.get("warehouse"))
                elif kind == "create_database":
                    sfmod.create_database(sf, args["database"], args.get("schema"), args.get("delete_first", True))
                elif kind == "create_table":
                    sfmod.create_table(sf, args["database"], args["table"], args["sql"], args.get("schema", "PUBLIC"))
                else:  # copy_keyfile
                    ctx.controller.upload_file(settings.path.read_bytes(), args.get("dest", "/home/user/keyfile.json"))
            except KeyError as exc:
                raise SetupError(f"actions[{i}] ({kind}) needs the field {exc}", step=name) from None
            except ValueError as exc:
                raise SetupError(f"actions[{i}] ({kind}): {exc}", step=name) from exc
            except SetupError:
                raise
            except Exception as exc:  # snowflake.connector.errors.Error: a statement failed
                raise SetupError(f"actions[{i}] ({kind}) failed on Snowflake: {exc}", step=name) from exc


# -- dbt Cloud -----------------------------------------------------------------------------------
@SETUP_STEPS.register(status=ACCOUNT, note=f"needs a dbt Cloud account ({VENDORS['dbt_cloud'][1]})")
def dbt_cloud_init(ctx: SetupContext, settings_file: str | None = None, actions: list | None = None) -> None:
    """Prepare a dbt Cloud account through the Administrative API.

    Args:
        settings_file: default ``settings/dbt_cloud/settings.json`` (``account_id``, ``token``,
            optionally ``cloud_host``).
        actions: ``create_project`` (``project_name``, default "Analytics") and ``delete_project``
            (``project_id``, default the account's first project).

    Raises:
        AccountRequired, CloudAPIError, SetupError (an unknown action).
    """
    from desktop_env.cloud.dbt_cloud import run_init_actions
    name = "dbt_cloud_init"
    acts = _actions(actions, name, ("create_project", "delete_project"))
    with dbt_cloud_for(ctx, {"settings_file": settings_file}, name) as client:
        try:
            run_init_actions(client, acts)
        except ValueError as exc:
            raise SetupError(str(exc), step=name) from exc


# -- Google Drive ---------------------------------------------------------------------------------
def _drive_actions(ctx: SetupContext, drive, actions: list[dict], name: str) -> None:
    import re

    from desktop_env.cloud import googledrive as gd
    for i, action in enumerate(actions):
        kind = action["type"]
        try:
            if kind == "delete":
                if action.get("query"):  # a raw Drive query, written for API v2 (title) or v3 (name)
                    query = re.sub(r"\btitle\b", "name", action["query"])
                    for item in drive.list(query):
                        drive.remove(item["id"], trash=bool(action.get("trash", False)))
                else:
                    gd.delete(drive, action.get("path"), bool(action.get("trash", False)))
            elif kind == "mkdirs":
                gd.mkdirs(drive, action["path"], bool(action.get("exist_ok", True)))
            else:  # upload
                src = action["src"]
                from desktop_env.tasks import is_remote_url
                if is_remote_url(src):
                    from desktop_env.configs.steps import fetch_bytes
                    source = ctx.cache_path(f"googledrive/upload-{i}-{Path(src).name or 'file'}")
                    source.write_bytes(fetch_bytes(src, ctx))
                else:
                    source = ctx.resolve(src)
                gd.upload(drive, source, action.get("path") or [source.name])
        except KeyError as exc:
            raise SetupError(f"actions[{i}] ({kind}) needs the field {exc}", step=name) from None
        except ValueError as exc:
            raise SetupError(f"actions[{i}] ({kind}): {exc}", step=name) from exc


DRIVE_ACTIONS = ("delete", "mkdirs", "upload")


@SETUP_STEPS.register(status=ACCOUNT, note=f"needs a Google Drive account ({VENDORS['googledrive'][1]})")
def googledrive_init(ctx: SetupContext, settings_file: str | None = None, actions: list | None = None) -> None:
    """Put the Drive of the settings file's user in a known state (Drive REST API v3).

    Args:
        settings_file: PyDrive's ``settings.yml`` (``client_config_file``, ``save_credentials_file``)
            or a JSON file with ``client_secrets_file`` and ``credentials_file``.
        actions: ``delete`` (``path``: names from the root, empty for everything in the root;
            ``trash``; or a raw Drive ``query``), ``mkdirs`` (``path``, ``exist_ok``), ``upload``
            (``src``: a task path, folder or URL; ``path``: where in Drive).

    Raises:
        AccountRequired, SettingsError, CloudAPIError, SetupError (an unknown action).
    """
    name = "googledrive_init"
    acts = _actions(actions, name, DRIVE_ACTIONS)
    with drive_for(ctx, {"settings_file": settings_file}, name) as drive:
        _drive_actions(ctx, drive, acts, name)


@SETUP_STEPS.register(status=ACCOUNT, note=f"needs a Google Drive account ({VENDORS['googledrive'][1]})")
def googledrive(ctx: SetupContext, settings_file: str | None = None, operation: list | None = None,
                args: list | None = None) -> None:
    """The general suite's Drive step: ``operation[i]`` (``delete``/``mkdirs``/``upload``) with
    ``args[i]``, run like :func:`googledrive_init`'s actions."""
    name = "googledrive"
    ops = list(operation or [])
    arg_list = list(args or [{}] * len(ops))
    if len(arg_list) != len(ops):
        raise SetupError("'operation' and 'args' must be parallel lists", step=name)
    acts = _actions([{**a, "type": op} for op, a in zip(ops, arg_list)], name, DRIVE_ACTIONS)
    with drive_for(ctx, {"settings_file": settings_file}, name) as drive:
        _drive_actions(ctx, drive, acts, name)


# -- WorkArena (ServiceNow) ----------------------------------------------------------------------

@SETUP_STEPS.register(status=UNAVAILABLE, note="WorkArena task generation (browsergym-workarena) is not embedded")
def workarena_task_init(ctx: SetupContext, task_name: str | None = None, task_kwargs: dict | None = None,
                        settings_file: str | None = None, listening_port: int = 9222) -> None:
    """WorkArena task set-up: checks the ServiceNow instance through the Table API, then refuses.

    The instance check (credentials, reachability) runs so a user learns whether the settings
    file is right; task generation itself is not available (see ``WORKARENA_MISSING``).

    Raises:
        AccountRequired: no settings file. CloudAPIError: the instance refused the credentials.
        NotSupportedError: always, once the instance answered.
    """
    from desktop_env.cloud.servicenow import ServiceNowClient
    name = "workarena_task_init"
    settings = load_settings(ctx, "workarena", {"settings_file": settings_file}, name)
    with ServiceNowClient.from_settings(settings) as client:
        client.check_login()
    raise NotSupportedError(f"the ServiceNow instance {client.instance_url} answered and accepted the credentials, "
                            f"but {WORKARENA_MISSING} (task {task_name!r}); see {DOCS}", step=name)


def template_paths(root: Path) -> list[Path]:
    """The settings templates every vendor should have under ``root`` (the suite root)."""
    return [root / (rel + ".template") for _, rel in VENDORS.values()]
