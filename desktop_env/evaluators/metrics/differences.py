"""Where a result first differs from what was expected, in words for a reason: a missing file, a line of
text, a JSON value by its key path, an error in one line."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from desktop_env.evaluators.reasons import STRUCTURE_MISMATCH, VALUE_MISMATCH, shown
from desktop_env.evaluators.values import GuestText


def missing_file(value: Any, what: str = "result file") -> str:
    """Why ``value`` is not an existing host file, naming it: the text of a ``MISSING_RESULT`` reason."""
    if value is None:
        return f"no {what} (the getter gave None)"
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, GuestText):
        try:
            folder = Path(value).is_dir()
        except (OSError, ValueError):
            folder = False
        return f"the {what} {value} is a folder, not a file" if folder else f"the {what} {value} does not exist"
    return f"the {what} is not a file but {shown(value)}"


_SHORT_LINE = 60  # characters of a line shown whole in a reason


def plural(n: int, noun: str) -> str:
    """``"1 line"``, ``"3 lines"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _blanks(text: str) -> str:
    """The run of blanks that starts ``text`` in words (``"4 spaces"``, ``"1 tab"``, ``"no blank"``)."""
    run = text[:len(text) - len(text.lstrip())]
    if not run:
        return "no blank"
    names = {" ": "space", "\t": "tab"}
    parts = [plural(run.count(c), names[c]) for c in " \t" if c in run]
    others = sum(1 for c in run if c not in " \t")
    return " and ".join(parts + ([plural(others, "other blank")] if others else []))


def line_difference(where: str, got: str, want: str) -> str:
    """How two lines differ, for a reason: ``"{where}: expected 'a', got 'b'"``; the column and a part of
    each when they are long, and the blanks in words when only blanks differ (a reason shows a run of
    blanks as one space)."""
    if got.split() == want.split():
        start = len(os.path.commonprefix([got, want]))
        while start and got[start - 1].isspace():
            start -= 1
        return (f"{where}, column {start + 1}: the lines differ in blanks only: expected {_blanks(want[start:])}, "
                f"got {_blanks(got[start:])} there ({shown(want.strip())})")
    if max(len(got), len(want)) <= _SHORT_LINE:
        return f"{where}: expected {shown(want)}, got {shown(got)}"
    column = len(os.path.commonprefix([got, want]))  # long lines: from a little before the difference
    start = max(0, column - 20)
    lead = "..." if start else ""
    return (f"{where}, column {column + 1}: expected {shown(lead + want[start:start + _SHORT_LINE])}, "
            f"got {shown(lead + got[start:start + _SHORT_LINE])}")


def first_line_difference(got: str, want: str) -> str:
    """Where two texts first differ, for a reason: the line number (from 1) with both lines.

    Texts whose lines are all equal differ in their line endings or final newline; then both endings
    are shown.
    """
    a, b = got.splitlines(), want.splitlines()
    for number, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return line_difference(f"line {number}", x, y)
    if len(a) < len(b):
        return f"line {len(a) + 1}: expected {shown(b[len(a)])}, got the end of the text ({plural(len(a), 'line')})"
    if len(a) > len(b):
        return f"line {len(b) + 1}: expected the end of the text ({plural(len(b), 'line')}), got {shown(a[len(b)])}"
    return (f"the lines are equal but the line endings differ: the text should end {shown(want[-30:])}, "
            f"it ends {shown(got[-30:])}")


def _key_path(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def json_difference(got: Any, want: Any, path: str = "", subset: bool = False) -> tuple[str, str] | None:
    """The first difference between two decoded JSON values as ``(kind, text)``, or None when they agree.

    ``text`` names the key path (``folders[0].path``) with both values. Without ``subset`` they agree
    when equal; with it, ``want``'s objects may be missing keys of ``got``'s (each key of ``want`` must be
    in ``got`` with a value that agrees), while lists must be equal.
    """
    where = f"key path {path!r}" if path else "the top level"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return STRUCTURE_MISMATCH, f"{where}: expected an object, got {shown(got)}"
        for key, value in want.items():
            if key not in got:
                return STRUCTURE_MISMATCH, f"key path {_key_path(path, key)!r} is missing (expected {shown(value)})"
            found = json_difference(got[key], value, _key_path(path, key), subset)
            if found:
                return found
        extra = [] if subset else [k for k in got if k not in want]
        if extra:
            key = _key_path(path, extra[0])
            return STRUCTURE_MISMATCH, f"key path {key!r} is not expected (got {shown(got[extra[0]])})"
        return None
    if isinstance(want, list):
        if not isinstance(got, list):
            return STRUCTURE_MISMATCH, f"{where}: expected a list, got {shown(got)}"
        for i, (x, y) in enumerate(zip(got, want)):
            found = json_difference(x, y, f"{path}[{i}]", False)
            if found:
                return found
        if len(got) != len(want):
            return STRUCTURE_MISMATCH, f"{where}: {len(got)} items, expected {len(want)}"
        return None
    if got != want:
        return VALUE_MISMATCH, f"{where}: expected {shown(want)}, got {shown(got)}"
    return None


def one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message on one line, at most ``limit`` characters (for a reason's text)."""
    return " ".join(str(exc).split())[:limit]
