"""What every part of the task format shares: its names and tags, its error, and how a path a task
names is read (a URL, a run-time ``cache/`` file, a ``file://`` URI)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from desktop_env.errors import TaskConfigError

SPELLING_TYPE = "type/parameters"
SPELLING_FUNC = "func/arguments"

INTERFACES = ("cli", "gui", "cli+gui")
GUIDANCES = ("verbose", "abstract")
CATEGORIES = (
    "data_ingestion_and_integration", "data_warehousing", "data_orchestration",
    "data_analysis_and_visualization", "traditional_data_processing",
    "it_service_management", "data_transformation",
)
ACCOUNT_TAG = "account"
INDEX_NAMES = ("test_all", "test_verbose", "test_abstract", "test_account", "test_non_account", "test_one")
VERBOSE_FILE = "verbose_instruction.txt"

#: Why a task cannot run here (desktop_env.tasks.offline finds them; a kept file may state one):
DOCKER, ASTRO, AIRBYTE, METABASE, INTERNET, SOFTWARE, UNAVAILABLE, EXTRA, ACCOUNT = (
    "docker", "astro", "airbyte", "metabase", "internet", "software", "unavailable", "extra", "account")

#: Reason kind -> how it reads, in the order reasons are listed.
KINDS = {
    DOCKER: "uses Docker",
    ASTRO: "uses the Astro CLI",
    AIRBYTE: "needs Airbyte",
    METABASE: "needs Metabase",
    INTERNET: "fetches from the internet",
    SOFTWARE: "needs software the image lacks",
    UNAVAILABLE: "uses a step or getter that cannot run here",
    EXTRA: "needs a part of the package that is not installed",
    ACCOUNT: "needs a cloud account",
}

UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_PLACEHOLDER_RE = re.compile(r"^(?:x+[-_]?)+$|^(?:todo|tbd|placeholder)?$", re.IGNORECASE)


class TaskFileNotFound(TaskConfigError):
    """A file a task names by relative path exists in none of the places tried.

    Attributes:
        tried: the paths that were looked at, in order.
    """

    def __init__(self, message: str, tried: list[Path], path=None, field=None):
        self.tried = list(tried)
        super().__init__(message + "; tried: " + ", ".join(str(p) for p in self.tried), path=path, field=field)


def task_error(message: str, path, field: str | None = None) -> TaskConfigError:
    """A :class:`TaskConfigError` naming the file (``path``, or None) and the field."""
    return TaskConfigError(message, path=None if path is None else str(path), field=field)


def read_json_file(path: Path) -> Any:
    """The JSON value held by the file ``path``.

    Raises:
        TaskConfigError: the file cannot be read, or its JSON is malformed (naming the file, line and column).
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskConfigError(f"cannot read: {exc}", str(path)) from exc
    except json.JSONDecodeError as exc:
        raise TaskConfigError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                              str(path)) from exc


def index_by_task_id(entries: Iterable[Any], claim: str) -> dict[str, Any]:
    """Each of ``entries`` by each task id it names, for the project's tables keyed by task id (kept
    solutions, grader corrections): an entry has ``ids``, ``path`` (its file) and ``ids_field`` (where in
    that file its ids are).

    Args:
        claim: what an entry says of its tasks, for the error (e.g. ``"has a kept solution"``).

    Raises:
        TaskConfigError: two entries name the same task id (naming both places).
    """
    out: dict[str, Any] = {}
    for entry in entries:
        for task_id in entry.ids:
            if task_id in out:
                first = out[task_id]
                raise TaskConfigError(f"task {task_id} {claim} twice (also {first.path} {first.ids_field})",
                                      str(entry.path), entry.ids_field)
            out[task_id] = entry
    return out


def find_suite_root(start: Path) -> Path | None:
    """The folder holding ``evaluation_examples/`` above ``start`` (a task file or folder), or None."""
    start = Path(start).resolve()
    for parent in (start, *start.parents):
        if parent.name == "evaluation_examples":
            return parent.parent
        if (parent / "evaluation_examples").is_dir() and parent != start:
            return parent
    return None


def is_placeholder(value: Any) -> bool:
    """True for the dummy values real task files carry (``"xxxxxx-xxxxxx-xxxxxx"``, ``""``)."""
    return isinstance(value, str) and bool(_PLACEHOLDER_RE.match(value.strip()))


# --------------------------------------------------------------------------- paths a task names
def is_remote_url(value: str) -> bool:
    """True for http(s)/ftp URLs (fetched, never resolved as task files)."""
    return bool(re.match(r"^(https?|ftp)://", value, re.IGNORECASE))


#: Task files of the existing suites name files that an earlier step put in the run-time cache
#: folder (``cache/<task id>/<name>``, e.g. a download) by this prefix.
RUNTIME_CACHE_PREFIX = "cache/"


def runtime_cache_part(value: str, task_id: str | None = None) -> str | None:
    """For a path in the run-time cache (``cache/<task id>/x`` or ``cache/x``), the part inside
    the task's cache folder (``x``); None for any other path."""
    if not isinstance(value, str) or not value.startswith(RUNTIME_CACHE_PREFIX):
        return None
    rest = value[len(RUNTIME_CACHE_PREFIX):]
    head, _, tail = rest.partition("/")
    if tail and (head == task_id or (task_id is None and UUID_RE.match(head))):
        return tail
    return rest


def strip_file_scheme(value: str) -> str:
    """``file:///x%20y`` -> ``/x y`` (percent-escapes decoded, as ``Path.as_uri()`` writes them);
    other strings unchanged."""
    from urllib.parse import unquote

    return unquote(value[len("file://"):]) if value.lower().startswith("file://") else value


def values_at(fields: dict, spec: str, where: str) -> Iterator[tuple[Any, str]]:
    """Values at ``spec`` (``"src"`` or ``"files[].local_path"``) with their dotted field names."""
    if "[]." in spec:
        head, tail = spec.split("[].", 1)
        items = fields.get(head)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    yield from values_at(item, tail, f"{where}.{head}[{i}]")
        return
    if spec in fields:
        value = fields[spec]
        if isinstance(value, list):
            for i, v in enumerate(value):
                yield v, f"{where}.{spec}[{i}]"
        else:
            yield value, f"{where}.{spec}"
