"""Google BigQuery through the official ``google-cloud-bigquery`` client (and the Connection REST API)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from desktop_env.cloud.base import CloudAPIError, Settings, SettingsError, missing_client

logger = logging.getLogger(__name__)

VENDOR = "Google BigQuery"
PIP_PACKAGE = "google-cloud-bigquery"
SCOPES = ("https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/bigquery")
CONNECTION_API = "https://bigqueryconnection.googleapis.com"


@dataclass
class GcpProject:
    """One project entry of the Google Cloud settings file (``gcp_config.json``).

    Attributes:
        project_id: the Google Cloud project id.
        keyfile: host path of the service-account key (JSON) of that project.
        api_endpoint: BigQuery REST endpoint override (default Google's).
        connection_api_endpoint: BigQuery Connection REST endpoint override.
        location: location of BigQuery connections (default ``us``).
    """

    project_id: str
    keyfile: Path
    api_endpoint: str | None = None
    connection_api_endpoint: str | None = None
    location: str = "us"


def select_project(settings: Settings, project_name: str | None = None, project_index: int | None = None
                   ) -> GcpProject:
    """The project a step or getter names, from a settings file holding a list of projects
    (``[{"project_name", "project_id", "keyfile_path", ...}]``) or a single project object.

    Args:
        project_name: matches an entry's ``project_name``.
        project_index: index into the list, when no ``project_name`` is given.

    Raises:
        SettingsError: no entry matches, or a field is missing, or the key file does not exist.
    """
    data = settings.data
    if isinstance(data, dict):
        entry = data
    elif isinstance(data, list) and data:
        if project_name is not None:
            entry = next((p for p in data if isinstance(p, dict) and p.get("project_name") == project_name), None)
            if entry is None:
                names = [p.get("project_name") for p in data if isinstance(p, dict)]
                raise SettingsError(settings.path, "project_name", f"no project named {project_name!r} "
                                    f"(the file has {names})", settings.step)
        elif project_index is not None:
            try:
                entry = data[int(project_index)]
            except (IndexError, ValueError) as exc:
                raise SettingsError(settings.path, None, f"project_index {project_index!r} out of range "
                                    f"(the file lists {len(data)} projects)", settings.step) from exc
        elif len(data) == 1:
            entry = data[0]
        else:
            raise SettingsError(settings.path, None, "the file lists several projects: the task must give "
                                "'project_name' or 'project_index'", settings.step)
    else:
        raise SettingsError(settings.path, None, "expected a list of project objects or one project object",
                            settings.step)
    project_id = settings.require("project_id", obj=entry)
    keyfile_rel = settings.require("keyfile_path", obj=entry).replace("{project_id}", str(project_id))
    keyfile = settings.resolve(keyfile_rel)
    if not keyfile.is_file():
        raise SettingsError(settings.path, "keyfile_path", f"service-account key {keyfile} does not exist; "
                            "download a JSON key for the project's service account and point keyfile_path at it",
                            settings.step)
    return GcpProject(str(project_id), keyfile, settings.get("api_endpoint", obj=entry),
                      settings.get("connection_api_endpoint", obj=entry), settings.get("location", "us", obj=entry))


def _google_errors():
    try:
        from google.api_core import exceptions as api_exc
        from google.auth import exceptions as auth_exc
    except ImportError as exc:  # pragma: no cover - depends on the host
        raise missing_client(PIP_PACKAGE, VENDOR) from exc
    return api_exc, auth_exc


def credentials_for(project: GcpProject):
    """Service-account credentials from the project's key file."""
    _google_errors()
    from google.oauth2 import service_account
    try:
        return service_account.Credentials.from_service_account_file(str(project.keyfile), scopes=list(SCOPES))
    except (ValueError, KeyError) as exc:
        raise SettingsError(project.keyfile, None, f"not a service-account key file: {exc}") from exc


class BigQuery:
    """A ``google.cloud.bigquery.Client`` for one project, with the operations the task format needs.

    Errors of access (refused credentials, unreachable endpoint) raise :class:`CloudAPIError`;
    the getters turn "not found" and "bad query" into a missing result.
    """

    def __init__(self, project: GcpProject, step: str | None = None):
        _google_errors()
        from google.cloud import bigquery

        self.project = project
        self.step = step
        self.credentials = credentials_for(project)
        options = {"api_endpoint": project.api_endpoint} if project.api_endpoint else None
        self.client = bigquery.Client(project=project.project_id, credentials=self.credentials,
                                      client_options=options)

    # -- error mapping ------------------------------------------------------------
    def call(self, what: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn``; access errors become :class:`CloudAPIError`, other API errors propagate."""
        api_exc, auth_exc = _google_errors()
        import requests
        try:
            return fn()
        except (api_exc.Unauthorized, api_exc.Forbidden) as exc:
            raise CloudAPIError(VENDOR, f"{what}: access refused for project {self.project.project_id}; check "
                                "the service account's roles", getattr(exc, "code", None), str(exc),
                                step=self.step) from exc
        except auth_exc.GoogleAuthError as exc:
            raise CloudAPIError(VENDOR, f"{what}: could not authenticate with {self.project.keyfile}: {exc}",
                                step=self.step) from exc
        except requests.RequestException as exc:
            raise CloudAPIError(VENDOR, f"{what}: API unreachable: {exc}", step=self.step) from exc

    def is_missing(self, exc: BaseException) -> bool:
        """Whether ``exc`` means "no such dataset/table" or "the query does not fit the data"."""
        api_exc, _ = _google_errors()
        return isinstance(exc, (api_exc.NotFound, api_exc.BadRequest))

    # -- setup ------------------------------------------------------------------
    def empty_project(self) -> None:
        """Delete every dataset (with its tables, routines and models) and the job history."""
        def run():
            for job in self.client.list_jobs(all_users=True):
                if job.state != "DONE":
                    self.client.cancel_job(job.job_id, location=job.location)
                self.client.delete_job_metadata(job.job_id, location=job.location, not_found_ok=True)
            for ds in self.client.list_datasets():
                for routine in self.client.list_routines(ds.reference):
                    self.client.delete_routine(routine.reference, not_found_ok=True)
                for model in self.client.list_models(ds.reference):
                    self.client.delete_model(model.reference, not_found_ok=True)
                self.client.delete_dataset(ds.reference, delete_contents=True, not_found_ok=True)
                logger.info("BigQuery: deleted dataset %s", ds.dataset_id)
        self.call("empty project", run)

    def create_table(self, dataset_id: str, table_id: str, schema: list[dict] | None = None,
                     csv_path: Path | None = None) -> None:
        """Create ``dataset_id`` (if needed) and the table ``table_id``, optionally loading a CSV.

        Args:
            schema: ``[{"name", "type" (default STRING), "mode" (default NULLABLE)}]``; without one
                the schema is detected from the CSV, whose first row is then the header.
            csv_path: host CSV file to load.
        """
        from google.cloud import bigquery
        pid = self.project.project_id
        fields = None if schema is None else [
            bigquery.SchemaField(s["name"], s.get("type", "STRING"), mode=s.get("mode", "NULLABLE")) for s in schema]

        def run():
            self.client.create_dataset(bigquery.Dataset(f"{pid}.{dataset_id}"), exists_ok=True)
            self.client.create_table(bigquery.Table(f"{pid}.{dataset_id}.{table_id}", schema=fields))
            if csv_path is not None:
                config = (bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.CSV, skip_leading_rows=1,
                                                 autodetect=True) if fields is None else
                          bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.CSV, schema=fields))
                # a known size lets small files go up in one multipart request instead of a resumable session
                with open(csv_path, "rb") as fh:
                    self.client.load_table_from_file(fh, f"{pid}.{dataset_id}.{table_id}", job_config=config,
                                                     size=Path(csv_path).stat().st_size).result()
            logger.info("BigQuery: created table %s.%s", dataset_id, table_id)
        self.call(f"create table {dataset_id}.{table_id}", run)

    # -- reads ------------------------------------------------------------------
    def query_rows(self, sql: str) -> list[tuple]:
        """Run ``sql`` (``jobs.query``) and return its rows as tuples."""
        return self.call("query", lambda: [tuple(row.values()) for row in self.client.query_and_wait(sql)])

    def table_exists(self, dataset_id: str, table_id: str) -> None:
        """Look the table up (raises ``google.api_core.exceptions.NotFound`` when absent)."""
        self.call("get table", lambda: self.client.get_table(f"{self.project.project_id}.{dataset_id}.{table_id}"))

    def dataset_ids(self) -> list[str]:
        """The project's dataset ids."""
        return self.call("list datasets", lambda: [d.dataset_id for d in self.client.list_datasets()])

    def connection_ids(self) -> list[str]:
        """Ids of the project's BigQuery connections in its location (Connection API
        ``GET /v1/projects/{p}/locations/{loc}/connections``, followed page by page)."""
        from google.auth.transport.requests import AuthorizedSession
        base = (self.project.connection_api_endpoint or CONNECTION_API).rstrip("/")
        url = f"{base}/v1/projects/{self.project.project_id}/locations/{self.project.location}/connections"

        def run():
            session = AuthorizedSession(self.credentials)
            try:
                ids, token = [], None
                while True:
                    params = {"pageSize": 100, **({"pageToken": token} if token else {})}
                    reply = session.get(url, params=params, timeout=60)
                    if reply.status_code >= 400:
                        raise CloudAPIError(VENDOR, f"GET {url} failed", reply.status_code, reply.text, step=self.step)
                    body = reply.json()
                    ids += [c["name"].rsplit("/", 1)[-1] for c in body.get("connections", [])]
                    token = body.get("nextPageToken")
                    if not token:
                        return ids
            finally:
                session.close()
        return self.call("list connections", run)

    def close(self) -> None:
        """Close the client's HTTP session."""
        self.client.close()

    def __enter__(self) -> "BigQuery":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def quote_table(project_id: str, dataset_id: str, table_id: str) -> str:
    """A fully qualified, backquoted table name for GoogleSQL."""
    for part, name in ((dataset_id, "dataset_id"), (table_id, "table_id")):
        if not part or "`" in part:
            raise ValueError(f"{name} {part!r} is not a valid BigQuery identifier")
    return f"`{project_id}.{dataset_id}.{table_id}`"
