"""The task spec: ``TaskSpec`` and its parts (setup steps, getters, the evaluator), read from and written
to either spelling of the task JSON, and the facts every caller asks of a task."""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_env.errors import TaskConfigError
from desktop_env.tasks.common import (ACCOUNT_TAG, CATEGORIES, GUIDANCES, INTERFACES, SPELLING_FUNC, SPELLING_TYPE,
                                      UUID_RE, VERBOSE_FILE, TaskFileNotFound, find_suite_root, is_placeholder,
                                      strip_file_scheme, task_error)
from desktop_env.tasks.names import check_names
from desktop_env.tasks.references import solution_source

logger = logging.getLogger(__name__)

#: The metric (and evaluation func) that marks a task whose right answer is FAIL.
INFEASIBLE = "infeasible"

#: top-level keys of the two spellings, and the keys of an evaluator
_TOP_LEVEL_A = ("id", "snapshot", "instruction", "source", "action_number", "related_apps", "tags",
                "counterpart", "config", "evaluator")
_TOP_LEVEL_B = ("evaluation",)
_EVALUATOR_KEYS = ("func", "conj", "result", "expected", "options", "postconfig")


@dataclass
class StepSpec:
    """One setup step: ``{"type": name, "parameters": {...}}`` or ``{"func": name, "arguments": {...}}``.

    Attributes:
        name: the step name (a key of ``SETUP_STEPS`` or of ``CONFIG_DISPATCH``).
        params: its parameters / arguments.
        spelling: ``SPELLING_TYPE`` or ``SPELLING_FUNC``.
    """

    name: str
    params: dict = field(default_factory=dict)
    spelling: str = SPELLING_TYPE

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TaskConfigError(f"a step name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.params, dict):
            raise TaskConfigError(f"step {self.name!r}: parameters must be an object, got {type(self.params).__name__}")
        if self.spelling not in (SPELLING_TYPE, SPELLING_FUNC):
            raise TaskConfigError(f"unknown spelling {self.spelling!r}")

    @classmethod
    def from_json(cls, data: Any, path=None, where: str = "config[0]") -> "StepSpec":
        """Parse one step in either spelling.

        Raises:
            TaskConfigError: not an object, or neither ``type`` nor ``func`` given.
        """
        if not isinstance(data, dict):
            raise task_error(f"a step must be an object, got {type(data).__name__}", path, where)
        if "type" in data:
            name, key, spelling = data["type"], "parameters", SPELLING_TYPE
        elif "func" in data:
            name, key, spelling = data["func"], "arguments", SPELLING_FUNC
        else:
            raise task_error("a step needs 'type' (with 'parameters') or 'func' (with 'arguments')", path, f"{where}.type")
        if not isinstance(name, str) or not name:
            raise task_error(f"the step name must be a non-empty string, got {name!r}", path,
                       f"{where}.{'type' if spelling == SPELLING_TYPE else 'func'}")
        params = data.get(key, {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise task_error(f"must be an object, got {type(params).__name__}", path, f"{where}.{key}")
        return cls(name, dict(params), spelling)

    def to_json(self) -> dict:
        """The step as it is written in a task file (in its own spelling)."""
        if self.spelling == SPELLING_FUNC:
            return {"func": self.name, "arguments": self.params}
        return {"type": self.name, "parameters": self.params}


@dataclass
class GetterSpec:
    """A GETTER object: ``{"type": name, ...fields}``."""

    type: str
    fields: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.type, str) or not self.type:
            raise TaskConfigError(f"a getter type must be a non-empty string, got {self.type!r}")

    @classmethod
    def from_json(cls, data: Any, path=None, where: str = "evaluator.result") -> "GetterSpec":
        """Parse one getter object.

        Raises:
            TaskConfigError: not an object or no ``type``.
        """
        if not isinstance(data, dict):
            raise task_error(f"a getter must be an object with a 'type', got {type(data).__name__}", path, where)
        if "type" not in data:
            raise task_error("a getter needs a 'type'", path, f"{where}.type")
        if not isinstance(data["type"], str) or not data["type"]:
            raise task_error(f"must be a non-empty string, got {data['type']!r}", path, f"{where}.type")
        return cls(data["type"], {k: v for k, v in data.items() if k != "type"})

    def to_json(self) -> dict:
        """The getter object as written in a task file."""
        return {"type": self.type, **self.fields}


@dataclass
class EvaluatorSpec:
    """The ``evaluator`` object of the "type/parameters" spelling, normalised to lists.

    Attributes:
        funcs: metric names; ``funcs[i]`` scores ``results[i]`` against ``expecteds[i]`` with ``options[i]``.
        conj: ``"and"`` (any 0 gives 0, else the mean) or ``"or"`` (any 1 gives 1, else the max).
        results / expecteds: getters, None where the JSON gives none.
        options: one dict of metric options per metric.
        postconfig: steps run after the agent finishes, before scoring.
        listed: whether ``func`` was a list in the JSON (kept for ``to_json``).
    """

    funcs: list[str]
    conj: str = "and"
    results: list[GetterSpec | None] = field(default_factory=list)
    expecteds: list[GetterSpec | None] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)
    postconfig: list[StepSpec] = field(default_factory=list)
    listed: bool = False

    def __post_init__(self):
        n = len(self.funcs)
        if n == 0:
            raise TaskConfigError("evaluator.func is empty")
        if self.conj not in ("and", "or"):
            raise TaskConfigError(f"evaluator.conj must be 'and' or 'or', got {self.conj!r}")
        self.results = list(self.results) or [None] * n
        self.expecteds = list(self.expecteds) or [None] * n
        self.options = list(self.options) or [{} for _ in range(n)]
        for name, seq in (("result", self.results), ("expected", self.expecteds), ("options", self.options)):
            if len(seq) != n:
                raise TaskConfigError(f"evaluator.{name} has {len(seq)} entries for {n} metrics",
                                      field=f"evaluator.{name}")

    @classmethod
    def from_json(cls, data: Any, path=None) -> "EvaluatorSpec":
        """Parse an ``evaluator`` object (single or list form).

        Raises:
            TaskConfigError: wrong types or list lengths that do not match ``func``.
        """
        if not isinstance(data, dict):
            raise task_error(f"must be an object, got {type(data).__name__}", path, "evaluator")
        if "func" not in data:
            raise task_error("missing required field", path, "evaluator.func")
        func = data["func"]
        listed = isinstance(func, list)
        funcs = func if listed else [func]
        for i, f in enumerate(funcs):
            if not isinstance(f, str) or not f:
                where = f"evaluator.func[{i}]" if listed else "evaluator.func"
                raise task_error(f"a metric name must be a non-empty string, got {f!r}", path, where)
        if not funcs:
            raise task_error("must name at least one metric", path, "evaluator.func")
        n = len(funcs)
        conj = data.get("conj", "and")
        if conj not in ("and", "or"):
            raise task_error(f"must be 'and' or 'or', got {conj!r}", path, "evaluator.conj")

        def per_metric(key: str, parse) -> list:
            if key not in data or data[key] is None:
                return [None] * n
            value = data[key]
            if listed:
                if not isinstance(value, list):
                    raise task_error(f"must be a list of {n} (func is a list), got {type(value).__name__}",
                               path, f"evaluator.{key}")
                if len(value) != n:
                    raise task_error(f"has {len(value)} entries but func names {n} metrics", path, f"evaluator.{key}")
                # an empty object in a list means "no getter here" (real task files write {} for
                # a metric that needs no expected value)
                return [None if v is None or (v == {} and key in ("result", "expected"))
                        else parse(v, f"evaluator.{key}[{i}]") for i, v in enumerate(value)]
            return [parse(value, f"evaluator.{key}")]

        results = per_metric("result", lambda v, w: GetterSpec.from_json(v, path, w))
        expecteds = per_metric("expected", lambda v, w: GetterSpec.from_json(v, path, w))

        def parse_options(v, where):
            if not isinstance(v, dict):
                raise task_error(f"options must be an object, got {type(v).__name__}", path, where)
            return dict(v)
        options = [o if o is not None else {} for o in per_metric("options", parse_options)]
        post = data.get("postconfig") or []
        if not isinstance(post, list):
            raise task_error(f"must be a list of steps, got {type(post).__name__}", path, "evaluator.postconfig")
        postconfig = [StepSpec.from_json(s, path, f"evaluator.postconfig[{i}]") for i, s in enumerate(post)]
        return cls(funcs, conj, results, expecteds, options, postconfig, listed)

    def to_json(self) -> dict:
        """The evaluator object in the shape it was read (single or list form)."""
        out: dict[str, Any] = {}
        if self.postconfig:
            out["postconfig"] = [s.to_json() for s in self.postconfig]
        if self.listed:
            out["func"] = list(self.funcs)
            out["conj"] = self.conj
            if any(r is not None for r in self.results):
                out["result"] = [None if r is None else r.to_json() for r in self.results]
            if any(e is not None for e in self.expecteds):
                out["expected"] = [None if e is None else e.to_json() for e in self.expecteds]
            if any(self.options):
                out["options"] = list(self.options)
        else:
            out["func"] = self.funcs[0]
            if self.conj != "and":
                out["conj"] = self.conj
            if self.results[0] is not None:
                out["result"] = self.results[0].to_json()
            if self.expecteds[0] is not None:
                out["expected"] = self.expecteds[0].to_json()
            if self.options[0]:
                out["options"] = self.options[0]
        return out


# --------------------------------------------------------------------------- the task
@dataclass
class TaskSpec:
    """One task, read from either spelling and validated on construction.

    Construction checks (``__post_init__``): required fields, every setup step / getter /
    metric name against its registry (unknown names raise with a did-you-mean), required
    fields of each, and that task files named by relative path exist. Unknown optional
    fields and placeholder values only warn (``warnings`` and the log).

    Attributes:
        id, instruction, snapshot, source, action_number, related_apps, tags, counterpart:
            as in the task file.
        config: setup steps, in order.
        evaluator: the "type/parameters" evaluator (None for the "func/arguments" spelling).
        evaluation: the "func/arguments" evaluation step (None for the other spelling).
        verbose_instruction: the text of ``verbose_instruction.txt`` beside the file, if any.
        path: the task file (None for a task built in memory).
        suite_root: the folder holding ``evaluation_examples/`` (None when there is none).
        extra: top-level keys this project does not interpret, kept for ``to_json``.
        warnings: problems that did not stop loading.
        settings_needed: host files the task names that the user fills in from a committed template
            (``settings/snowflake/settings.json`` beside ``settings.json.template``): account settings, so
            the task needs an account instead of failing to load.
        correction: the grader finding whose correction was applied when the task was loaded with grader
            corrections on (:mod:`desktop_env.tasks.corrections`); None when its grader is the file's own.
    """

    id: str
    instruction: str
    config: list[StepSpec] = field(default_factory=list)
    evaluator: EvaluatorSpec | None = None
    evaluation: StepSpec | None = None
    snapshot: str | None = None
    source: list[str] = field(default_factory=list)
    action_number: int | None = None
    related_apps: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    counterpart: str | None = None
    verbose_instruction: str | None = None
    path: Path | None = None
    suite_root: Path | None = None
    extra: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    settings_needed: list[str] = field(default_factory=list)
    correction: str | None = None
    validate: bool = field(default=True, repr=False, compare=False)

    # ------------------------------------------------------------------ validation
    def __post_init__(self):
        if self.path is not None:
            self.path = Path(self.path).absolute()
        if self.suite_root is not None:
            self.suite_root = Path(self.suite_root).absolute()
        elif self.path is not None:
            self.suite_root = find_suite_root(self.path)
        if not isinstance(self.id, str) or not self.id:
            raise task_error(f"must be a non-empty string, got {self.id!r}", self.path, "id")
        if not isinstance(self.instruction, str) or not self.instruction.strip():
            raise task_error("must be a non-empty string", self.path, "instruction")
        if (self.evaluator is None) == (self.evaluation is None):
            raise task_error("a task needs exactly one of 'evaluator' (type/parameters spelling) or "
                       "'evaluation' (func/arguments spelling)", self.path,
                       "evaluator" if self.evaluator is None else "evaluation")
        if not isinstance(self.tags, list) or not all(isinstance(t, str) for t in self.tags):
            raise task_error("must be a list of strings", self.path, "tags")
        if self.action_number is not None and (not isinstance(self.action_number, int)
                                               or isinstance(self.action_number, bool)):
            raise task_error(f"must be an integer, got {self.action_number!r}", self.path, "action_number")
        if self.counterpart is not None and is_placeholder(self.counterpart):
            self._warn(f"counterpart is a placeholder ({self.counterpart!r}); no counterpart task is linked",
                       "counterpart")
        if self.path is not None and self.id and UUID_RE.match(self.path.stem) and self.path.stem != self.id:
            self._warn(f"id {self.id!r} differs from the file name {self.path.name!r}", "id")
        self._check_snapshot()
        if self.validate:
            self.check_names()

    def _check_snapshot(self) -> None:
        """``snapshot``: a string; ``profile:state`` must name a profile of this repository and a
        warm state it declares (the message lists them)."""
        if self.snapshot is None:
            return
        if not isinstance(self.snapshot, str) or not self.snapshot.strip():
            raise task_error(f"must be a non-empty string, got {self.snapshot!r}", self.path, "snapshot")
        if ":" not in self.snapshot:
            return
        from desktop_env.image.recipe import Recipe
        from desktop_env.image.states import parse_snapshot, state_recipes

        profile, state = parse_snapshot(self.snapshot)
        profiles = Recipe.available()
        if profile not in profiles:
            raise task_error(f"{self.snapshot!r} names the image profile {profile!r}, which this repository does not "
                             f"have (profiles: {', '.join(profiles)}); write 'profile:state' or a bare state name",
                             self.path, "snapshot")
        states = state_recipes(profile)
        if state not in states:
            raise task_error(f"the {profile!r} image has no warm state {state!r}; its states: "
                             f"{', '.join(sorted(states)) or 'none'} (or write just {profile!r} to start from its "
                             "ready state)", self.path, "snapshot")

    def _warn(self, message: str, field_: str | None = None) -> None:
        text = f"{self.path or self.id}: {field_ + ': ' if field_ else ''}{message}"
        self.warnings.append(text)
        logger.warning("%s", text)

    def check_names(self) -> None:
        """Resolve every setup step, getter and metric name and check their fields
        (:func:`desktop_env.tasks.names.check_names`).

        Raises:
            TaskConfigError: an unknown name (with did-you-mean), a missing required field, or
                a task file named by relative path that does not exist.
        """
        check_names(self)

    # ------------------------------------------------------------------ paths
    @property
    def task_dir(self) -> Path | None:
        """The folder holding the task file."""
        return None if self.path is None else self.path.parent

    def path_candidates(self, rel: str, suite_root: Path | None = None) -> list[Path]:
        """Where a path named in the task may live, in the order tried: suite root, then task folder."""
        rel = strip_file_scheme(rel)
        p = Path(os.path.expanduser(rel))
        if p.is_absolute():
            return [p]
        out = []
        root = suite_root if suite_root is not None else self.suite_root
        if root is not None:
            out.append(Path(root) / p)
        if self.task_dir is not None:
            out.append(self.task_dir / p)
            # "evaluation_examples/examples/<app>/<uuid>/x" written relative to the suite root
            # also resolves from the task folder when the suite was moved without its root.
            if p.parts and p.parts[0] == "evaluation_examples" and len(p.parts) > 1:
                out.append(self.task_dir / p.name)
        if not out:
            out.append(Path.cwd() / p)
        seen, uniq = set(), []
        for c in out:
            if c not in seen:
                seen.add(c)
                uniq.append(c)
        return uniq

    def settings_template(self, rel: str, suite_root: Path | None = None) -> Path | None:
        """The committed template of a host file the task names that is missing (``rel + ".template"``), or
        None: such a file is the user's own account settings, filled in from the template and never shipped."""
        from desktop_env.paths import repo_root

        if any(c.exists() for c in self.path_candidates(rel, suite_root)):
            return None
        candidates = self.path_candidates(rel + ".template", suite_root)
        if not Path(rel).is_absolute():  # this project ships the templates of the suites' settings files too
            candidates.append(repo_root() / (rel + ".template"))
        return next((c for c in candidates if c.is_file()), None)

    def resolve_path(self, rel: str, suite_root: Path | None = None, field_: str | None = None) -> Path:
        """Resolve a path the task names: absolute as is, else suite root first, task folder second.

        Raises:
            TaskFileNotFound: it exists in none of them (the message lists what was tried).
        """
        tried = self.path_candidates(rel, suite_root)
        for c in tried:
            if c.exists():
                return c
        raise TaskFileNotFound(f"file {rel!r} not found", tried, path=None if self.path is None else str(self.path),
                               field=field_)

    # ------------------------------------------------------------------ tags and derived facts
    @property
    def spelling(self) -> str:
        """``SPELLING_TYPE`` or ``SPELLING_FUNC`` (by which evaluator key the file uses)."""
        return SPELLING_FUNC if self.evaluation is not None else SPELLING_TYPE

    @property
    def interface(self) -> str | None:
        """``cli``, ``gui`` or ``cli+gui`` from the tags, or None."""
        return next((t for t in self.tags if t in INTERFACES), None)

    @property
    def guidance(self) -> str | None:
        """``verbose`` or ``abstract`` from the tags, or None."""
        return next((t for t in self.tags if t in GUIDANCES), None)

    @property
    def category(self) -> str | None:
        """One of the 7 pipeline ``CATEGORIES`` from the tags, or None."""
        return next((t for t in self.tags if t in CATEGORIES), None)

    @property
    def infeasible(self) -> bool:
        """Whether the task's right answer is FAIL: its only metric is ``infeasible`` (every func of the
        evaluator, or the ``evaluation`` func). A list that mixes ``infeasible`` with other metrics is
        feasible; ``infeasible`` then scores 0 like any failed metric."""
        if self.evaluation is not None:
            return self.evaluation.name == INFEASIBLE
        return bool(self.evaluator.funcs) and all(f == INFEASIBLE for f in self.evaluator.funcs)

    @property
    def image_profile(self) -> str | None:
        """The image profile of this repository the task needs (its ``snapshot`` when it names one:
        ``base``, ``data``...), or None (no snapshot, or a name of another suite's snapshot)."""
        from desktop_env.image.recipe import Recipe

        from desktop_env.image.states import parse_snapshot

        profile, _state = parse_snapshot(self.snapshot)
        return profile if profile in Recipe.available() else None

    @property
    def warm_state(self) -> str | None:
        """The warm state the ``snapshot`` names (``data:airflow`` or a bare ``airflow``), or None.
        A bare name is only a wish: it is used when the image in use declares that state."""
        from desktop_env.image.states import parse_snapshot

        return parse_snapshot(self.snapshot)[1]

    @property
    def solution_kind(self) -> str | None:
        """How the reference solution acts: ``commands`` (shell steps only, or ``solution.sh``),
        ``gui`` (actions only), ``mixed``, or None when the task has none."""
        source = solution_source(self)
        if source.kind == "solution.sh":
            return "commands"
        items = source.items
        if not isinstance(items, list) or not items:
            return None
        kinds = {"commands" if isinstance(i, dict) and "command" in i else "gui" for i in items}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    @property
    def needs_account(self) -> bool:
        """True when the task is tagged ``account``, uses a name that needs a cloud account, or names a settings
        file that is filled in from its template (``settings_needed``)."""
        return (ACCOUNT_TAG in self.tags or bool(self.settings_needed)
                or any(s == "account" for s in self.name_statuses().values()))

    @property
    def app(self) -> str | None:
        """The app (domain) folder the task lives in, else its first related app."""
        if self.path is not None:
            parent = self.path.parent
            if parent.name == self.path.stem or UUID_RE.match(parent.name or ""):
                parent = parent.parent
            if parent.name and parent.name != "examples":
                return parent.name
        return self.related_apps[0] if self.related_apps else None

    def names_used(self) -> list[tuple[str, str]]:
        """Every (registry kind, name) the task uses, in file order, duplicates kept."""
        out: list[tuple[str, str]] = []
        for s in self.config:
            out.append(("config func" if s.spelling == SPELLING_FUNC else "setup step", s.name))
        if self.evaluator is not None:
            for s in self.evaluator.postconfig:
                out.append(("config func" if s.spelling == SPELLING_FUNC else "setup step", s.name))
            for i, f in enumerate(self.evaluator.funcs):
                out.append(("metric", f))
                for g in (self.evaluator.results[i], self.evaluator.expecteds[i]):
                    if g is not None:
                        out.append(("getter", g.type))
        if self.evaluation is not None:
            out.append(("evaluation func", self.evaluation.name))
        return out

    def name_statuses(self) -> dict[tuple[str, str], str]:
        """(kind, name) -> registry status (``supported``/``account``/``unavailable``/``unknown``)."""
        from desktop_env import registry as reg

        tables = {r.kind: r for r in reg.ALL_REGISTRIES}
        out = {}
        for kind, name in self.names_used():
            table = tables[kind]
            out[(kind, name)] = table.entries[name].status if name in table else "unknown"
        return out

    # ------------------------------------------------------------------ (de)serialisation
    @classmethod
    def from_json(cls, data: Any, path: str | os.PathLike | None = None,
                  suite_root: str | os.PathLike | None = None, validate: bool = True) -> "TaskSpec":
        """Build a task from a decoded task file (either spelling).

        Args:
            data: the decoded JSON object.
            path: the file it came from (for messages, relative paths and ``verbose_instruction.txt``).
            suite_root: the folder holding ``evaluation_examples/``; found from ``path`` if omitted.
            validate: resolve names and task files (off only for tools that report instead).

        Raises:
            TaskConfigError: see the class docstring.
        """
        path = None if path is None else Path(path)
        if not isinstance(data, dict):
            raise task_error(f"a task file must hold a JSON object, got {type(data).__name__}", path)
        for key in ("id", "instruction"):
            if key not in data:
                raise task_error("missing required field", path, key)
        if "evaluator" not in data and "evaluation" not in data:
            raise task_error("missing required field (or 'evaluation' in the func/arguments spelling)", path, "evaluator")
        if "evaluator" in data and "evaluation" in data:
            raise task_error("a task has either 'evaluator' or 'evaluation', not both", path, "evaluation")
        config_raw = data.get("config") or []
        if not isinstance(config_raw, list):
            raise task_error(f"must be a list of steps, got {type(config_raw).__name__}", path, "config")
        config = [StepSpec.from_json(s, path, f"config[{i}]") for i, s in enumerate(config_raw)]
        evaluator = EvaluatorSpec.from_json(data["evaluator"], path) if "evaluator" in data else None
        evaluation = None
        if "evaluation" in data:
            ev = data["evaluation"]
            if not isinstance(ev, dict) or "func" not in ev:
                raise task_error("must be an object with 'func' and 'arguments'", path, "evaluation.func")
            evaluation = StepSpec.from_json(ev, path, "evaluation")
        source = data.get("source") or []
        if isinstance(source, str):
            source = [source]
        tags = data.get("tags") or []
        related = data.get("related_apps") or []
        if not isinstance(related, list):
            raise task_error("must be a list of strings", path, "related_apps")
        verbose = None
        if path is not None:
            vfile = path.parent / VERBOSE_FILE
            if path.parent.name == path.stem and vfile.is_file():
                verbose = vfile.read_text(encoding="utf-8")
        known = set(_TOP_LEVEL_A) | set(_TOP_LEVEL_B)
        extra = {k: v for k, v in data.items() if k not in known}
        task = cls(
            id=data["id"], instruction=data["instruction"], config=config, evaluator=evaluator,
            evaluation=evaluation, snapshot=data.get("snapshot"), source=list(source),
            action_number=data.get("action_number"), related_apps=list(related), tags=tags,
            counterpart=data.get("counterpart"), verbose_instruction=verbose, path=path,
            suite_root=None if suite_root is None else Path(suite_root), extra=extra, validate=validate,
        )
        return task

    def to_json(self) -> dict:
        """The task as a task file in its own spelling (round-trips ``from_json``)."""
        out: dict[str, Any] = {"id": self.id}
        if self.snapshot is not None:
            out["snapshot"] = self.snapshot
        out["instruction"] = self.instruction
        if self.source:
            out["source"] = list(self.source)
        if self.action_number is not None:
            out["action_number"] = self.action_number
        out["config"] = [s.to_json() for s in self.config]
        if self.related_apps:
            out["related_apps"] = list(self.related_apps)
        if self.evaluator is not None:
            out["evaluator"] = self.evaluator.to_json()
        if self.evaluation is not None:
            out["evaluation"] = self.evaluation.to_json()
        if self.tags:
            out["tags"] = list(self.tags)
        if self.counterpart is not None:
            out["counterpart"] = self.counterpart
        out.update(self.extra)
        return out
