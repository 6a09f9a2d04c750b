"""Snowflake metrics: a created user (properties, roles, a password that logs in) and an event-table log record."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from desktop_env.cloud.base import CloudAPIError, Settings
from desktop_env.cloud.accounts import DOCS, VENDORS, settings_file_for
from desktop_env.session import AccountRequired
from desktop_env.evaluators.metrics.differences import one_line
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.reasons import MISSING_RESULT, RULE_FAILED, VALUE_MISMATCH, explain, fail, shown
from desktop_env.registry import ACCOUNT, METRICS
from desktop_env.tasks import find_suite_root

logger = logging.getLogger(__name__)

_NOTE = f"scores what a Snowflake getter read; needs a {VENDORS['snowflake'][0]} account ({VENDORS['snowflake'][1]})"
#: expected keys of is_snowflake_user_created that are not ``DESC USER`` properties
_SPECIAL_KEYS = ("PASSWORD", "ROLE")
#: connection settings of the account owner that the new user may not have; dropped for its login
_OWNER_ONLY = ("role", "warehouse", "database", "schema", "authenticator", "private_key_file",
               "private_key_file_pwd")


def _as_text(value: Any) -> str:
    """A property value as ``DESC USER`` prints it (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _settings(settings_file: str | None, name: str) -> Settings:
    """The Snowflake settings file a metric option names, or the vendor's default.

    Metrics are not given the task, so a relative path resolves against the working folder,
    then the suite root above it (the getters resolve the same path against the task's suite).

    Raises:
        AccountRequired: no such file (the message names it and its template).
    """
    rel = settings_file_for("snowflake", {"settings_file": settings_file})
    path = Path(rel).expanduser()
    if path.is_absolute():
        candidates = [path]
    else:
        roots = [Path.cwd(), find_suite_root(Path.cwd())]
        candidates = [root / path for root in roots if root is not None]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise AccountRequired(
            f"{name} logs in to {VENDORS['snowflake'][0]} to check a password: fill in {rel} (tried "
            f"{', '.join(str(c) for c in candidates)}; copy {rel}.template — see {DOCS})",
            settings_file=rel, template=rel + ".template", step=name)
    return Settings.read(found, step=name)


def _can_log_in(settings_file: str | None, user: str, password: str, name: str) -> bool:
    """Whether ``user`` logs in to the settings file's account with ``password``.

    Raises:
        CloudAPIError: the account could not be reached (as opposed to refusing the login).
    """
    from desktop_env.cloud.snowflake import Snowflake, connect_args
    args = connect_args(_settings(settings_file, name), user=user, password=password)
    for key in _OWNER_ONLY:
        args.pop(key, None)
    try:
        Snowflake(args, step=name).close()
        return True
    except CloudAPIError as exc:
        cause = exc.__cause__
        # Snowflake's own login refusals (wrong password, locked, disabled or expired user) are
        # errors 390xxx, "invalid authorization" (SQLSTATE 28000) to the connector; anything else
        # (no answer, an answer that is not Snowflake's: 250001/08001) is no verdict on the password
        errno = getattr(cause, "errno", None)
        if (isinstance(errno, int) and 390000 <= errno < 391000) or getattr(cause, "sqlstate", None) == "28000":
            logger.info("%s: %r cannot log in: %s", name, user, cause)
            explain(RULE_FAILED, f"user {user!r} cannot log in with the expected password: {one_line(cause)}")
            return False
        raise


@METRICS.register(status=ACCOUNT, note=_NOTE)
def is_snowflake_user_created(result: Any, expected: dict, settings_file: str | None = None) -> float:
    """1 when a Snowflake user has the expected properties, roles and password.

    Args:
        result: the ``snowflake_user_info`` getter's dict (``DESC USER`` properties keyed in
            upper case, plus ``ROLE``: the granted roles), or None when the user is missing.
        expected: ``{PROPERTY: value}`` (keys in any case), each compared as text with the
            result (``MUST_CHANGE_PASSWORD: "false"``), and optionally ``ROLE`` (a role or a
            list, each of which must be granted) and ``PASSWORD`` (the user, by its
            ``LOGIN_NAME``, must log in with it).
        settings_file: the account settings used for that login (default
            ``evaluation_examples/settings/snowflake/settings.json``).

    Raises:
        MetricError: ``expected`` is not a dict.
        AccountRequired: ``PASSWORD`` is expected and the settings file is missing.
        CloudAPIError: the account cannot be reached to try the password.
    """
    name = "is_snowflake_user_created"
    if not isinstance(expected, dict):
        raise MetricError(f"{name} expects a rule {{PROPERTY: value, ROLE, PASSWORD}}, got {expected!r}")
    if not isinstance(result, dict):
        logger.info("%s: no user information (%r)", name, result)
        return fail(MISSING_RESULT, f"no information on the user (the getter gave {shown(result)}): the user "
                                    f"may not exist")
    want = {str(k).upper(): v for k, v in expected.items()}
    for key, value in want.items():
        if key not in _SPECIAL_KEYS and result.get(key) != _as_text(value):
            logger.info("%s: %s is %r, expected %r", name, key, result.get(key), _as_text(value))
            return fail(VALUE_MISMATCH, f"user property {key}: expected {shown(_as_text(value))}, "
                                        f"got {shown(result.get(key))}")
    if "ROLE" in want:
        roles = [want["ROLE"]] if isinstance(want["ROLE"], str) else list(want["ROLE"])
        granted = {str(r).upper() for r in result.get("ROLE") or []}
        missing = [r for r in roles if str(r).upper() not in granted]
        if missing:
            logger.info("%s: roles %s not granted (granted: %s)", name, missing, sorted(granted))
            return fail(RULE_FAILED, f"role {missing[0]!r} is not granted to the user (granted: {sorted(granted)})")
    if "PASSWORD" in want:
        login = result.get("LOGIN_NAME") or result.get("NAME")
        if not login:
            return fail(RULE_FAILED, "the user information has no LOGIN_NAME or NAME to try the password with")
        if not _can_log_in(settings_file, str(login), str(want["PASSWORD"]), name):
            return 0.0
    return 1.0


@METRICS.register(status=ACCOUNT, note=_NOTE)
def check_snowflake_log_message(result: Any, expected: dict) -> float:
    """1 when a log record has the expected severity and message.

    Args:
        result: the ``snowflake_log_message`` getter's ``{"severity", "message"}``, or None
            when no record arrived.
        expected: ``{"severity": "INFO", "message": "..."}``, both compared exactly.

    Raises:
        MetricError: ``expected`` lacks ``severity`` or ``message``.
    """
    if not isinstance(expected, dict) or not {"severity", "message"} <= set(expected):
        raise MetricError(f"check_snowflake_log_message expects a rule {{severity, message}}, got {expected!r}")
    if not isinstance(result, dict):
        logger.info("check_snowflake_log_message: no log record (%r)", result)
        return fail(MISSING_RESULT, f"no log record arrived in the event table (the getter gave {shown(result)})")
    for key in ("severity", "message"):
        if result.get(key) != expected[key]:
            logger.info("check_snowflake_log_message: %s is %r, expected %r", key, result.get(key), expected[key])
            return fail(VALUE_MISMATCH, f"the log record's {key}: expected {shown(expected[key])}, "
                                        f"got {shown(result.get(key))}")
    return 1.0
