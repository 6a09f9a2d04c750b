"""Why a score is what it is: the closed set of reason kinds, the ``Reason`` record, and how graders give one.

A metric (or getter, or evaluator of the func/arguments spelling) keeps returning its score; where it
finds what makes the answer wrong it says so with :func:`explain` (or ``return fail(kind, text)``,
which explains and returns 0.0)::

    if got != want:
        return fail(VALUE_MISMATCH, f"Sheet1!B3: expected {want!r}, got {got!r}")

The reason travels beside the score, not in it: :func:`explain` writes to the record of the
evaluation under way (a context variable), so converting the score to a float, clamping it into
[0, 1] or combining several scores cannot drop it. The evaluator opens a record around each metric
(its getters included) and keeps the **first** failure explained there: the innermost, earliest
difference found. A metric called outside an evaluation (a test, a script) explains into nothing,
unless the caller opens a record with :func:`collecting`.

Text rules: one line, what was compared and where the first difference is (the sheet and cell with
both values, the row, the line, the missing file or table, the distance against its threshold, the
rule that did not hold). Values are shortened with :func:`shown`.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import dataclass, replace
from typing import Any, Iterator

# --------------------------------------------------------------------------- kinds (closed, documented in docs/tasks.md)
#: Every check held (the score is 1).
PASSED = "passed"
#: What is scored is not there: no file at the path, no table, no page, a getter found nothing.
MISSING_RESULT = "missing_result"
#: The result is there but cannot be read as what it should be (not a workbook, bad JSON, not an image).
UNREADABLE_RESULT = "unreadable_result"
#: A value differs: a cell, a row of a table, a line of text, a field, a setting.
VALUE_MISMATCH = "value_mismatch"
#: The shape differs: sheets, columns, the number of rows, keys, slides, a missing table or element.
STRUCTURE_MISMATCH = "structure_mismatch"
#: A measured similarity, distance or count is on the wrong side of its threshold.
THRESHOLD_NOT_MET = "threshold_not_met"
#: A rule did not hold: a text to include is absent or one to exclude present, a pattern, a condition.
RULE_FAILED = "rule_failed"
#: The task cannot be done, and the agent did not answer FAIL.
INFEASIBLE = "infeasible"
#: The agent answered FAIL on a task that can be done.
GAVE_UP = "gave_up"
#: A grader scored below 1 and said nothing (a plugin metric that does not use this module).
UNEXPLAINED = "unexplained"

#: Every kind, in the order reports list them.
KINDS = (PASSED, MISSING_RESULT, UNREADABLE_RESULT, VALUE_MISMATCH, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET,
         RULE_FAILED, INFEASIBLE, GAVE_UP, UNEXPLAINED)
#: The kinds of a failed score.
FAILURE_KINDS = KINDS[1:]

#: Characters of one value shown in a reason.
SHOWN_CHARS = 80
#: Characters of a whole reason's text.
TEXT_CHARS = 600


@dataclass(frozen=True)
class Reason:
    """Why a score is what it is.

    Attributes:
        kind: one of :data:`KINDS`.
        text: one line: what was compared and where the first difference is.
        metric: the metric (or evaluator) that decided, when the evaluator knows it.
        index: its position in the task's list of metrics, when there are several.
    """

    kind: str
    text: str
    metric: str | None = None
    index: int | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown reason kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        text = re.sub(r"\s*[\r\n]+\s*", " ", str(self.text)).strip()  # one line; blanks inside values are kept
        object.__setattr__(self, "text", text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS - 3] + "...")

    def __str__(self) -> str:
        return f"{self.metric}: {self.text}" if self.metric and not self.text.startswith(self.metric) else self.text

    def to_json(self) -> dict:
        """``{"kind", "text", "metric", "index"}`` (None fields left out)."""
        return {k: v for k, v in (("kind", self.kind), ("text", self.text), ("metric", self.metric),
                                  ("index", self.index)) if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> "Reason | None":
        """The reason of a ``to_json`` dict; None for anything else (a folder written before reasons)."""
        if not isinstance(data, dict) or data.get("kind") not in KINDS or not isinstance(data.get("text"), str):
            return None
        index = data.get("index")
        return cls(data["kind"], data["text"], data.get("metric") if isinstance(data.get("metric"), str) else None,
                   index if isinstance(index, int) else None)

    def about(self, metric: str | None, index: int | None = None) -> "Reason":
        """This reason attributed to ``metric`` (kept when it already names one)."""
        return replace(self, metric=self.metric or metric, index=self.index if self.index is not None else index)


# --------------------------------------------------------------------------- the record of an evaluation
_RECORD: contextvars.ContextVar[list[Reason] | None] = contextvars.ContextVar("desktop_env_reasons", default=None)


@contextlib.contextmanager
def collecting() -> Iterator[list[Reason]]:
    """Open a record: the reasons explained inside the ``with`` block are appended to the list it gives."""
    noted: list[Reason] = []
    token = _RECORD.set(noted)
    try:
        yield noted
    finally:
        _RECORD.reset(token)


def explain(kind: str, text: str) -> None:
    """Say why the score being computed is not 1 (or, with ``PASSED``, what held); no-op outside a record.

    Raises:
        ValueError: an unknown kind (a programming error, caught by the tests).
    """
    reason = Reason(kind, text)
    noted = _RECORD.get()
    if noted is not None:
        noted.append(reason)


def fail(kind: str, text: str, score: float = 0.0) -> float:
    """:func:`explain` a failure and return ``score`` (0.0 by default, or a partial score below 1)."""
    explain(kind, text)
    return score


def first_failure(noted: list[Reason]) -> Reason | None:
    """The first failure in a record (a ``PASSED`` note never explains a low score)."""
    return next((r for r in noted if r.kind != PASSED), None)


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr`` of a value for a reason, on one line (a string's blanks kept as they are), shortened to ``limit``
    characters."""
    text = repr(value)
    if "\n" in text:  # the repr of a container or frame: its layout is not the value
        text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
