"""ServiceNow instances (WorkArena tasks) through the REST Table API (``/api/now/table/{table}``)."""
from __future__ import annotations

import logging

from desktop_env.cloud.base import CloudAPIError, JsonSession, Settings

logger = logging.getLogger(__name__)

VENDOR = "ServiceNow"


class ServiceNowClient:
    """The Table API of one ServiceNow instance, with basic authentication.

    Replies have the shape ``{"result": [record, ...]}`` (a list for queries, an object for one record).

    Args:
        instance_url: ``https://devNNNNN.service-now.com``.
        username: usually ``admin`` on a developer instance.
        password: that user's password.
    """

    def __init__(self, instance_url: str, username: str, password: str, step: str | None = None):
        self.instance_url = instance_url.rstrip("/")
        self.username = username
        self.http = JsonSession(VENDOR, self.instance_url, auth=(username, password), step=step)

    @classmethod
    def from_settings(cls, settings: Settings) -> "ServiceNowClient":
        """A client from the WorkArena settings file: ``SNOW_INSTANCE_URL``, ``SNOW_INSTANCE_UNAME``,
        ``SNOW_INSTANCE_PWD`` (the names WorkArena's own tooling reads; ``instance_url``,
        ``username``, ``password`` are accepted too)."""
        return cls(settings.require("SNOW_INSTANCE_URL", aliases=("instance_url",)),
                   settings.require("SNOW_INSTANCE_UNAME", aliases=("username",)),
                   settings.require("SNOW_INSTANCE_PWD", aliases=("password",)), step=settings.step)

    def table(self, table: str, query: str = "", fields: list[str] | None = None, limit: int = 100) -> list[dict]:
        """Records of ``table`` matching an encoded ``query`` (``sysparm_query``), at most ``limit``."""
        params = {"sysparm_limit": limit, "sysparm_display_value": "false"}
        if query:
            params["sysparm_query"] = query
        if fields:
            params["sysparm_fields"] = ",".join(fields)
        reply = self.http.request("GET", f"/api/now/table/{table}", params=params)
        result = (reply or {}).get("result")
        if not isinstance(result, list):
            raise CloudAPIError(VENDOR, f"table {table}: unexpected reply without a 'result' list", body=str(reply),
                                step=self.http.step)
        return result

    def check_login(self) -> dict:
        """Fetch the configured user's own ``sys_user`` record: proves the URL and credentials work.

        Raises:
            CloudAPIError: the instance refused the credentials, could not be reached, or has no such user.
        """
        users = self.table("sys_user", f"user_name={self.username}", ["sys_id", "user_name"], limit=1)
        if not users:
            raise CloudAPIError(VENDOR, f"user {self.username!r} not found in sys_user", step=self.http.step)
        logger.info("ServiceNow: logged in to %s as %s", self.instance_url, self.username)
        return users[0]

    def close(self) -> None:
        """Close the HTTP session."""
        self.http.close()

    def __enter__(self) -> "ServiceNowClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
