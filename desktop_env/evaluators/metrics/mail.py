"""Thunderbird metrics: preferences (prefs.js), message filters (msgFilterRules.dat) and mail folders (mbox files)."""
from __future__ import annotations

import difflib
import email
import email.policy
import json
import logging
import mailbox
import re
from collections import Counter
from pathlib import Path
from typing import Any

from desktop_env.evaluators.metrics.files import first_line_difference, missing_file
from desktop_env.evaluators.metrics.utils import (MetricError, OptionError, as_existing_path, check_rule_method,
                                                  match_value_to_rule, rule_kind, rule_mismatch, rule_text, text_of)
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, UNREADABLE_RESULT,
                                            VALUE_MISMATCH, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


def _expect_unexpect(metric: str, expected: Any, container: type) -> tuple[Any, Any]:
    """The ``expect`` and ``unexpect`` parts of a rule object, each a ``container`` (dict or list).

    Raises:
        MetricError: not an object, a key other than expect/unexpect, a part of the wrong type,
            or no rule at all.
    """
    shape = "{key: {'method': ..., 'ref': ...}}" if container is dict else "[{field: value, ...}]"
    if not isinstance(expected, dict):
        raise MetricError(f"{metric}: the expected rules must be an object {{'expect': {shape}, "
                          f"'unexpect': {shape}}}, got {expected!r}")
    for key in expected:
        if key not in ("expect", "unexpect"):
            close = difflib.get_close_matches(str(key), ["expect", "unexpect"], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MetricError(f"{metric}: unknown rule key {key!r}{hint} (accepted: expect, unexpect)")
    parts = []
    for key in ("expect", "unexpect"):
        part = expected.get(key) or container()
        if not isinstance(part, container):
            raise MetricError(f"{metric}: {key!r} must be {shape}, got {part!r}")
        parts.append(part)
    if not parts[0] and not parts[1]:
        raise MetricError(f"{metric}: the rules hold no 'expect' or 'unexpect' entry")
    return parts[0], parts[1]


# --------------------------------------------------------------------------- prefs.js

_PREF_LINE = re.compile(r'^\s*(?:user_|sticky_)?pref\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*(.*?)\s*\)\s*;\s*$')


def _read_prefs(text: str) -> dict[str, Any]:
    """The preferences of a prefs.js text, ``name -> value``: ``user_pref("name", value);`` lines.

    Values are JSON (``true``, ``42``, ``"text"`` with its escapes); one that is not keeps its
    source text. A name set twice keeps its last value, as Thunderbird does.
    """
    prefs: dict[str, Any] = {}
    for line in text.splitlines():
        m = _PREF_LINE.match(line)
        if m is None:
            continue
        try:
            name = json.loads(f'"{m.group(1)}"')
        except ValueError:
            name = m.group(1)
        try:
            prefs[name] = json.loads(m.group(2))
        except ValueError:
            prefs[name] = m.group(2)
    return prefs


@METRICS.register()
def check_thunderbird_prefs(result: Any, expected: Any) -> float:
    """1 when Thunderbird's preferences hold every ``expect`` rule and no ``unexpect`` rule.

    Args:
        result: the profile's prefs.js (``user_pref("name", value);`` lines).
        expected: ``{"expect": {name: {"method": M, "ref": R}}, "unexpect": {name: {...}}}``: each
            ``expect`` preference must be set to a matching value (an unset preference fails); an
            ``unexpect`` preference fails only when it is set to a matching value. Values are
            typed as in the file (``true``, numbers, strings); methods as in rule matching
            (``eq``, ``re``, ``re.S``...).
    """
    metric = "check_thunderbird_prefs"
    expect, unexpect = _expect_unexpect(metric, expected, dict)
    for part, rules in (("expect", expect), ("unexpect", unexpect)):
        for name, rule in rules.items():
            check_rule_method(rule, f"{part}.{name}")
    text = text_of(result)
    if text is None:
        logger.info("%s: prefs.js is missing", metric)
        return fail(MISSING_RESULT, missing_file(result, "prefs.js file"))
    prefs = _read_prefs(text)
    for name, rule in expect.items():
        if name not in prefs:
            return fail(rule_kind(rule), f"preference {name}: expected {rule_text(rule)}, but it is not set")
        if not match_value_to_rule(prefs[name], rule):
            return fail(rule_kind(rule), f"preference {name}: {rule_mismatch(prefs[name], rule)}")
    for name, rule in unexpect.items():
        if name in prefs and match_value_to_rule(prefs[name], rule):
            return fail(RULE_FAILED, f"preference {name} is {shown(prefs[name])}, which the unexpect rule "
                                     f"{rule_text(rule)} forbids")
    return 1.0


# --------------------------------------------------------------------------- msgFilterRules.dat

#: the fields of one filter in msgFilterRules.dat (``version`` and ``logging`` belong to the file)
_FILTER_FIELDS = ("name", "enabled", "type", "action", "actionValue", "condition", "customId")
_FILTER_LINE = re.compile(r'^(\w+)="(.*)"\s*$')
# one search term of a condition: "AND (subject,contains,discount)", a quoted value may hold ")" and
# escaped quotes; or "ALL" (every message)
_CONDITION_TERM = re.compile(r'\b(?:AND|OR) \([^,()]*,[^,()]*,(?:"(?:[^"\\]|\\.)*"|[^)]*)\)|\bALL\b')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _read_filters(text: str) -> list[dict[str, Any]]:
    """The filters of a msgFilterRules.dat text.

    Each is ``{"name", "enabled", "type", ..., "condition": [terms], "actions": [(action, value)]}``;
    a filter starts at its ``name=`` line, and may carry several actions, each ``action=`` line
    optionally followed by its ``actionValue=``.
    """
    filters: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        m = _FILTER_LINE.match(line.strip())
        if m is None:
            continue
        key, value = m.group(1), _unescape(m.group(2))
        if key == "name":
            current = {"name": value, "actions": [], "condition": []}
            filters.append(current)
        elif current is None:
            continue  # version=, logging=: the file's header
        elif key == "action":
            current["actions"].append([value, None])
        elif key == "actionValue" and current["actions"]:
            current["actions"][-1][1] = value
        elif key == "condition":
            current["condition"] = [t.strip() for t in _CONDITION_TERM.findall(value)]
        else:
            current[key] = value
    return filters


def _filter_matches(rule: dict[str, Any], flt: dict[str, Any]) -> bool:
    """Whether a filter has every field of ``rule``; ``action``/``actionValue`` must belong to one action."""
    for key, want in rule.items():
        if key in ("action", "actionValue"):
            continue
        if key == "condition":
            terms = [want] if isinstance(want, str) else list(want)
            if flt["condition"] != [str(t).strip() for t in terms]:
                return False
        elif key not in flt or flt[key] != str(want):
            return False
    if "action" in rule or "actionValue" in rule:
        return any(("action" not in rule or action == str(rule["action"]))
                   and ("actionValue" not in rule or value == str(rule["actionValue"]))
                   for action, value in flt["actions"])
    return True


def _filter_differences(rule: dict[str, Any], flt: dict[str, Any]) -> list[str]:
    """The fields in which a filter differs from a record, for a reason (``enabled: expected 'yes', got 'no'``)."""
    found = []
    for key, want in rule.items():
        if key in ("action", "actionValue"):
            continue
        if key == "condition":
            terms = [str(t).strip() for t in ([want] if isinstance(want, str) else list(want))]
            if flt["condition"] != terms:
                found.append(f"condition: expected {shown(terms)}, got {shown(flt['condition'])}")
        elif key not in flt or flt[key] != str(want):
            found.append(f"{key}: expected {shown(str(want))}, got {shown(flt.get(key))}")
    if ("action" in rule or "actionValue" in rule) and not _filter_matches(
            {k: v for k, v in rule.items() if k in ("action", "actionValue")}, flt):
        want = {k: str(rule[k]) for k in ("action", "actionValue") if k in rule}
        found.append(f"actions: expected one with {shown(want)}, got {shown([tuple(a) for a in flt['actions']])}")
    return found


def _check_filter_rules(metric: str, part: str, rules: list) -> None:
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict) or not rule:
            raise MetricError(f"{metric}: {part}[{i}] must be an object {{field: value}}, got {rule!r}")
        for key in rule:
            if key not in _FILTER_FIELDS:
                close = difflib.get_close_matches(str(key), _FILTER_FIELDS, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise MetricError(f"{metric}: {part}[{i}] has an unknown filter field {key!r}{hint} "
                                  f"(fields: {', '.join(_FILTER_FIELDS)})")


@METRICS.register()
def check_thunderbird_filter(result: Any, expected: Any) -> float:
    """1 when some filter matches each ``expect`` record and no filter matches an ``unexpect`` record.

    Args:
        result: a msgFilterRules.dat (an account's message filters).
        expected: ``{"expect": [record], "unexpect": [record]}``; a record lists filter fields that
            must all be equal: ``name``, ``enabled`` ("yes"/"no"), ``type``, ``action``
            ("Move to folder", "Forward"...) with ``actionValue`` (both of one of the filter's
            actions), and ``condition``, the list of search terms as Thunderbird writes them
            (``["AND (subject,contains,discount)"]``, ``["ALL"]``).
    """
    metric = "check_thunderbird_filter"
    expect, unexpect = _expect_unexpect(metric, expected, list)
    _check_filter_rules(metric, "expect", expect)
    _check_filter_rules(metric, "unexpect", unexpect)
    text = text_of(result)
    if text is None:
        logger.info("%s: msgFilterRules.dat is missing", metric)
        return fail(MISSING_RESULT, missing_file(result, "msgFilterRules.dat file"))
    filters = _read_filters(text)
    for i, rule in enumerate(expect):
        if not any(_filter_matches(rule, flt) for flt in filters):
            logger.info("%s: no filter matches %s (filters: %s)", metric, rule, filters)
            if not filters:
                return fail(STRUCTURE_MISMATCH, f"msgFilterRules.dat holds no filter; expect[{i}] wants one with "
                                                f"{shown(rule)}")
            diffs, closest = min(((_filter_differences(rule, flt), flt) for flt in filters), key=lambda d: len(d[0]))
            more = f" (and {len(diffs) - 1} more fields)" if len(diffs) > 1 else ""
            return fail(VALUE_MISMATCH, f"no filter matches expect[{i}]; the closest, {shown(closest['name'])}, "
                                        f"differs in {diffs[0]}{more}")
    for i, rule in enumerate(unexpect):
        hit = next((flt for flt in filters if _filter_matches(rule, flt)), None)
        if hit is not None:
            return fail(RULE_FAILED, f"the filter {shown(hit.get('name'))} matches unexpect[{i}] {shown(rule)}")
    return 1.0


# --------------------------------------------------------------------------- mbox folders

_STATUS_HEADERS = ("x-mozilla-status", "x-mozilla-status2")
_KEYS_HEADER = "x-mozilla-keys"
_EXPUNGED = 0x0008  # X-Mozilla-Status flag of a message deleted but not yet compacted away


class _Unreadable(Exception):
    """An mbox file that cannot be read."""


def _is_deleted(msg: email.message.Message) -> bool:
    try:
        return bool(int(str(msg.get("X-Mozilla-Status", "0")).strip(), 16) & _EXPUNGED)
    except ValueError:
        return False


def _message_key(raw: bytes, ignore_status: bool, ignore_keys: bool) -> tuple:
    """A message as comparable data: its headers (name lower-cased, value unfolded) and its body."""
    raw = raw.replace(b"\r\n", b"\n")
    head, _, body = raw.partition(b"\n\n")
    msg = email.message_from_bytes(head + b"\n\n", policy=email.policy.compat32)
    dropped = (_STATUS_HEADERS if ignore_status else ()) + ((_KEYS_HEADER,) if ignore_keys else ())
    headers = tuple((k.lower(), " ".join(str(v).split())) for k, v in msg.items() if k.lower() not in dropped)
    return headers, body.strip()


def _read_folder(path: Path, ignore_status: bool, ignore_keys: bool, remove_deleted: bool) -> list[tuple]:
    """The messages of an mbox file as :func:`_message_key` tuples, in file order."""
    try:
        box = mailbox.mbox(str(path), create=False)
        try:
            messages = []
            for key in box.iterkeys():
                raw = box.get_bytes(key)
                head = email.message_from_bytes(raw.partition(b"\n\n")[0] + b"\n\n")
                if remove_deleted and _is_deleted(head):
                    continue
                messages.append(_message_key(raw, ignore_status, ignore_keys))
            return messages
        finally:
            box.close()
    except (OSError, mailbox.Error) as exc:
        raise _Unreadable(str(exc)) from exc


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def check_folder_options(options: dict) -> None:
    """Validate ``check_thunderbird_folder`` options when a task is loaded.

    Raises:
        OptionError: an option that is not true/false.
    """
    for name in ("ignore_status", "ignore_keys", "remove_deleted", "remove_duplicate"):
        if name in options and not isinstance(options[name], bool):
            raise OptionError(f"check_thunderbird_folder: must be true or false, got {options[name]!r}", name)


@METRICS.register(check=check_folder_options)
def check_thunderbird_folder(result: Any, expected: Any, ignore_status: bool = False, ignore_keys: bool = False,
                             remove_deleted: bool = True, remove_duplicate: bool = True) -> float:
    """1 when a Thunderbird mail folder holds the same messages as the gold folder, in any order.

    Args:
        result / expected: the folder's mbox file (e.g. ``Mail/Local Folders/Bills``) and the gold
            one, or lists of them compared pairwise (all pairs must agree).
        ignore_status: ignore the ``X-Mozilla-Status``/``X-Mozilla-Status2`` headers (read, starred...).
        ignore_keys: ignore the ``X-Mozilla-Keys`` header (tags).
        remove_deleted: leave out messages marked deleted (expunged) but not compacted away.
        remove_duplicate: compare the sets of distinct messages (a message copied twice counts once);
            when false the number of copies must agree too.
    """
    check_folder_options({"ignore_status": ignore_status, "ignore_keys": ignore_keys,
                          "remove_deleted": remove_deleted, "remove_duplicate": remove_duplicate})
    results, golds = _as_list(result), _as_list(expected)
    if len(results) != len(golds):
        raise MetricError(f"check_thunderbird_folder: {len(results)} result folders for {len(golds)} gold folders; "
                          "give one gold mbox file per result")
    for got_value, gold_value in zip(results, golds):
        gold = as_existing_path(gold_value)
        if gold is None:
            raise MetricError(f"check_thunderbird_folder: the gold mbox file {gold_value!r} does not exist")
        try:
            want = _read_folder(gold, ignore_status, ignore_keys, remove_deleted)
        except _Unreadable as exc:
            raise MetricError(f"check_thunderbird_folder: the gold mbox file {gold} cannot be read: {exc}") from None
        path = as_existing_path(got_value)
        if path is None:
            logger.info("check_thunderbird_folder: the folder file is missing (%r)", got_value)
            return fail(MISSING_RESULT, missing_file(got_value, "mail folder file"))
        try:
            got = _read_folder(path, ignore_status, ignore_keys, remove_deleted)
        except _Unreadable as exc:
            logger.info("check_thunderbird_folder: %s cannot be read: %s", path, exc)
            return fail(UNREADABLE_RESULT, f"the mail folder file {path.name} cannot be read as mbox: {exc}")
        if remove_duplicate:
            got_count, want_count = Counter(set(got)), Counter(set(want))
        else:
            got_count, want_count = Counter(got), Counter(want)
        if got_count != want_count:
            logger.info("check_thunderbird_folder: %s holds %d messages, the gold %s %d; %d of them differ",
                        path.name, len(got), gold.name, len(want), len(set(got) ^ set(want)))
            return fail(*_folder_difference(path.name, got_count, want_count))
    return 1.0


def _header(msg: tuple, name: str) -> str | None:
    """The value of a header (lower-case ``name``) of a :func:`_message_key` message, or None."""
    return next((value for key, value in msg[0] if key == name), None)


def _label(msg: tuple) -> str:
    """A message for a reason: its subject (or Message-ID)."""
    subject = _header(msg, "subject")
    return f"the message {shown(subject)}" if subject is not None else f"the message {_header(msg, 'message-id')}"


def _message_difference(got: tuple, want: tuple) -> str:
    """The first header (or the body) in which a message differs from its gold version, both values shown."""
    got_headers, want_headers = dict(got[0]), dict(want[0])
    for name in list(want_headers) + [k for k in got_headers if k not in want_headers]:
        if got_headers.get(name) != want_headers.get(name):
            return f"header {name}: expected {shown(want_headers.get(name))}, got {shown(got_headers.get(name))}"
    return "body " + first_line_difference(got[1].decode("utf-8", "replace"), want[1].decode("utf-8", "replace"))


def _messages(n: int) -> str:
    return f"{n} message" if n == 1 else f"{n} messages"


def _folder_difference(name: str, got: Counter, want: Counter) -> tuple[str, str]:
    """Why a folder's messages (with their counts) differ from the gold ones, as ``(kind, text)``: a message
    changed (paired with its gold version by Message-ID, else subject), missing, added or copied another
    number of times; STRUCTURE_MISMATCH when the numbers of messages differ."""
    missing, extra = list((want - got).elements()), list((got - want).elements())
    got_total, want_total = sum(got.values()), sum(want.values())
    kind, prefix = ((STRUCTURE_MISMATCH, f"{name} holds {_messages(got_total)}, the gold folder {want_total}: ")
                    if got_total != want_total else (VALUE_MISMATCH, f"{name}: "))
    changed, added = [m for m in missing if m not in got], [m for m in extra if m not in want]
    for key in ("message-id", "subject"):
        for old in changed:
            new = next((m for m in added if _header(m, key) is not None and _header(m, key) == _header(old, key)),
                       None)
            if new is not None:
                return kind, f"{prefix}{_label(old)} differs from the gold one in {_message_difference(new, old)}"
    message = (missing + extra)[0]
    if message in got and message in want:
        return kind, f"{prefix}{_label(message)} is there {got[message]} times, in the gold folder {want[message]}"
    if message in want:
        return kind, f"{prefix}{_label(message)} of the gold folder is not there"
    return kind, f"{prefix}{_label(message)} is not in the gold folder"
