"""dbt Cloud through its Administrative REST API (v2 and v3): projects, environments and jobs."""
from __future__ import annotations

import logging
from typing import Any

from desktop_env.cloud.base import CloudAPIError, JsonSession, Settings

logger = logging.getLogger(__name__)

VENDOR = "dbt Cloud"
DEFAULT_HOST = "cloud.getdbt.com"
PAGE_LIMIT = 100  # items per page of a list endpoint


class DbtCloudClient:
    """The dbt Cloud Administrative API for one account.

    Every reply has the envelope ``{"status": {"code", "is_success", "user_message",
    "developer_message"}, "data": ..., "extra": {"pagination": {"count", "total_count"}}}``.

    Args:
        account_id: the numeric account id (the number in ``cloud.getdbt.com/<id>/...`` URLs).
        token: a service token or personal access token (sent as ``Authorization: Token <token>``).
        base_url: ``https://<cloud_host>`` (default ``https://cloud.getdbt.com``; regional and
            single-tenant hosts differ).
    """

    def __init__(self, account_id: int | str, token: str, base_url: str = f"https://{DEFAULT_HOST}",
                 step: str | None = None):
        self.account_id = str(account_id)
        self.http = JsonSession(VENDOR, base_url, headers={"Authorization": f"Token {token}"}, step=step)

    @classmethod
    def from_settings(cls, settings: Settings) -> "DbtCloudClient":
        """A client from a settings file with ``account_id``, ``token`` (or ``api_token``) and
        optionally ``cloud_host`` or a full ``base_url``."""
        account_id = settings.require("account_id")
        token = settings.require("token", aliases=("api_token",))
        base_url = settings.get("base_url") or f"https://{settings.get('cloud_host', DEFAULT_HOST)}"
        return cls(account_id, token, base_url, step=settings.step)

    # -- transport ------------------------------------------------------------
    def _call(self, method: str, path: str, params: dict | None = None, body: Any = None) -> Any:
        reply = self.http.request(method, path, params=params, json_body=body)
        status = (reply or {}).get("status") or {}
        if status and not status.get("is_success", True):
            raise CloudAPIError(VENDOR, f"{method} {path}: {status.get('user_message') or 'request failed'}",
                                status.get("code"), str(status.get("developer_message") or ""), step=self.http.step)
        return (reply or {}).get("data")

    def _list(self, path: str, params: dict | None = None) -> list[dict]:
        out: list[dict] = []
        offset = 0
        while True:
            page_params = {**(params or {}), "limit": PAGE_LIMIT, "offset": offset}
            reply = self.http.request("GET", path, params=page_params)
            data = (reply or {}).get("data") or []
            out.extend(data)
            total = ((reply or {}).get("extra") or {}).get("pagination", {}).get("total_count")
            offset += len(data)
            if len(data) < PAGE_LIMIT or (total is not None and offset >= total):
                return out

    # -- resources --------------------------------------------------------------
    def list_projects(self) -> list[dict]:
        """Every project of the account (``GET /api/v3/accounts/{id}/projects/``)."""
        return self._list(f"/api/v3/accounts/{self.account_id}/projects/")

    def create_project(self, name: str) -> dict:
        """Create a project (``POST /api/v3/accounts/{id}/projects/``) and return it."""
        logger.info("dbt Cloud: creating project %r in account %s", name, self.account_id)
        return self._call("POST", f"/api/v3/accounts/{self.account_id}/projects/",
                          body={"name": name, "account_id": int(self.account_id) if self.account_id.isdigit()
                                else self.account_id})

    def delete_project(self, project_id: int | str) -> None:
        """Delete a project (``DELETE /api/v3/accounts/{id}/projects/{project_id}/``)."""
        logger.info("dbt Cloud: deleting project %s in account %s", project_id, self.account_id)
        self._call("DELETE", f"/api/v3/accounts/{self.account_id}/projects/{project_id}/")

    def list_environments(self, project_id: int | str) -> list[dict]:
        """Environments of a project (``GET /api/v3/accounts/{id}/projects/{project_id}/environments/``)."""
        return self._list(f"/api/v3/accounts/{self.account_id}/projects/{project_id}/environments/")

    def list_jobs(self, project_id: int | str) -> list[dict]:
        """Jobs of a project (``GET /api/v2/accounts/{id}/jobs/?project_id=``)."""
        return self._list(f"/api/v2/accounts/{self.account_id}/jobs/", params={"project_id": project_id})

    def close(self) -> None:
        """Close the HTTP session."""
        self.http.close()

    def __enter__(self) -> "DbtCloudClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- what the task format's setup actions and getters compute ------------------------------------
def run_init_actions(client: DbtCloudClient, actions: list[dict]) -> None:
    """Run ``dbt_cloud_init`` actions: ``create_project`` (``project_name``, default ``"Analytics"``)
    and ``delete_project`` (``project_id``; default the account's first project).

    Raises:
        ValueError: an action has an unknown ``type``.
    """
    for i, action in enumerate(actions or []):
        kind = action.get("type")
        if kind == "create_project":
            client.create_project(action.get("project_name", "Analytics"))
        elif kind == "delete_project":
            project_id = action.get("project_id")
            if not project_id:
                projects = client.list_projects()
                if not projects:
                    logger.info("dbt Cloud: no project to delete")
                    continue
                project_id = projects[0]["id"]
            client.delete_project(project_id)
        else:
            raise ValueError(f"actions[{i}].type {kind!r} is not a dbt_cloud_init action; "
                             "expected 'create_project' or 'delete_project'")


def _field_text(obj: dict, name: str) -> str:
    return str(obj.get(name))


def project_info(client: DbtCloudClient, fields: list[str]) -> str:
    """The first project's ``fields`` joined as ``"v1 v2 "``; ``connection_type`` is the project's
    connection type (``"None"`` without one). ``"None"`` when the account has no project."""
    projects = client.list_projects()
    if not projects:
        return "None"
    project = projects[0]
    out = ""
    for name in fields:
        if name == "connection_type":
            connection = project.get("connection")
            out += "None" if not connection else str(connection.get("type"))
        else:
            out += _field_text(project, name)
        out += " "
    return out


def environment_info(client: DbtCloudClient, name: str, fields: list[str]) -> str:
    """The ``fields`` of the first project's environment called ``name``, joined as ``"v1 v2 "``;
    ``"None"`` when there is no project or no such environment."""
    projects = client.list_projects()
    if not projects:
        return "None"
    envs = [e for e in client.list_environments(projects[0]["id"]) if e.get("name") == name]
    if not envs:
        return "None"
    return "".join(_field_text(envs[0], f) + " " for f in fields)


def job_info(client: DbtCloudClient, name: str, fields: list[str], prev_name: str = "New Job") -> str:
    """The ``fields`` of the first project's job called ``name``, joined as ``"v1 v2 "``.

    ``time_<key>`` reads ``schedule.time.<key>``; ``job_completion_trigger_condition`` gives
    ``"matched"``/``"mismatched"`` (whether the triggering job is ``prev_name``) followed by the
    triggering statuses, or ``"None"`` when the job has no such trigger. ``"None"`` when there is
    no project or no such job.
    """
    projects = client.list_projects()
    if not projects:
        return "None"
    jobs = client.list_jobs(projects[0]["id"])
    ids = {j.get("name"): j.get("id") for j in jobs}
    job = next((j for j in jobs if j.get("name") == name), None)
    if job is None:
        return "None"
    out = ""
    for f in fields:
        if f.startswith("time_"):
            out += str(((job.get("schedule") or {}).get("time") or {}).get(f[len("time_"):]))
        elif f == "job_completion_trigger_condition":
            trigger = job.get(f)
            if not trigger:
                return "None"
            condition = trigger.get("condition") or {}
            out += "matched " if condition.get("job_id") == ids.get(prev_name) else "mismatched "
            out += "".join(f"{s} " for s in condition.get("statuses") or [])
        else:
            out += _field_text(job, f)
        out += " "
    return out
