"""Every registry of the project, of one type: the names task files dispatch on (setup steps, getters,
metrics, the func/arguments tables), agents by model name and VM providers.

The built-in entries are listed in one place, :data:`BUILTIN_MODULES`: the modules whose import
fills each registry, imported on the first lookup. A plugin module registers with the registry's
decorator (``@METRICS.register``, ``@register_agent``, ``@register_provider``); no base module imports
its own plugins.
"""
from __future__ import annotations

import difflib
import importlib
import inspect
import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

from desktop_env.errors import TaskConfigError

logger = logging.getLogger(__name__)

#: Entry statuses: what ``tasks check`` reports for a name.
SUPPORTED = "supported"      # runs here against a VM
ACCOUNT = "account"          # needs a real cloud account and a filled-in settings file
UNAVAILABLE = "unavailable"  # registered so tasks load, but cannot run (reason in ``note``)
STATUSES = (SUPPORTED, ACCOUNT, UNAVAILABLE)

#: The built-in entries, in one visible place: for each group of registries, the modules whose import
#: fills it (each uses its registry's ``register`` decorator), imported in this order on first lookup.
BUILTIN_MODULES: dict[str, tuple[str, ...]] = {
    "task": (
        "desktop_env.configs.steps",
        "desktop_env.configs.browser",
        "desktop_env.configs.webui",
        "desktop_env.configs.accounts",
        "desktop_env.evaluators.getters.apps",
        "desktop_env.evaluators.getters.browser",
        "desktop_env.evaluators.getters.chrome_pages",
        "desktop_env.evaluators.getters.chrome_profile",
        "desktop_env.evaluators.getters.cloud",
        "desktop_env.evaluators.getters.file",
        "desktop_env.evaluators.getters.general",
        "desktop_env.evaluators.getters.vm",
        "desktop_env.evaluators.metrics.browser",
        "desktop_env.evaluators.metrics.csv_files",
        "desktop_env.evaluators.metrics.database",
        "desktop_env.evaluators.metrics.documents",
        "desktop_env.evaluators.metrics.document_format",
        "desktop_env.evaluators.metrics.files",
        "desktop_env.evaluators.metrics.files_documents",
        "desktop_env.evaluators.metrics.files_python",
        "desktop_env.evaluators.metrics.files_tables",
        "desktop_env.evaluators.metrics.general",
        "desktop_env.evaluators.metrics.gimp",
        "desktop_env.evaluators.metrics.gimp_files",
        "desktop_env.evaluators.metrics.images",
        "desktop_env.evaluators.metrics.mail",
        "desktop_env.evaluators.metrics.media",
        "desktop_env.evaluators.metrics.notebook",
        "desktop_env.evaluators.metrics.presentations",
        "desktop_env.evaluators.metrics.slides",
        "desktop_env.evaluators.metrics.snowflake",
        "desktop_env.evaluators.metrics.sql",
        "desktop_env.evaluators.metrics.table",
        "desktop_env.evaluators.metrics.vlc",
        "desktop_env.configs.dispatch",
        "desktop_env.evaluators.dispatch",
    ),
    "agent": ("desktop_env.agents.simple", "desktop_env.agents.human", "desktop_env.agents.kinds"),
    "provider": ("desktop_env.providers.qemu.provider", "desktop_env.providers.libvirt"),
}


class UnknownNameError(TaskConfigError):
    """A task names a setup step, getter or metric that no registry holds.

    Attributes:
        kind: the registry kind ("setup step", "getter", ...).
        name: the unknown name.
        suggestions: close registered names (difflib), best first.
    """

    def __init__(self, kind: str, name: str, suggestions: list[str], path=None, field=None):
        self.kind = kind
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown {kind} {name!r}{hint}", path=path, field=field)


@dataclass(frozen=True)
class Entry:
    """One registered name.

    Attributes:
        name: the name the JSON uses.
        func: the implementation.
        status: one of ``STATUSES``.
        note: why a non-supported entry cannot run, or what it needs.
        required: fields the JSON must give (from the signature: parameters without default).
        accepted: every field the implementation accepts, or None when it takes ``**kwargs``.
        host_paths: fields holding host paths relative to the suite root or task folder;
            ``"files[].local_path"`` means each item's ``local_path`` in the list ``files``.
        check: validates the fields' values when a task is loaded, ``check(fields)``; it
            raises an error with a ``field`` attribute (the dotted path inside ``fields``)
            for a value the implementation would reject when it runs.
    """

    name: str
    func: Callable
    status: str = SUPPORTED
    note: str = ""
    required: tuple[str, ...] = ()
    accepted: tuple[str, ...] | None = None
    host_paths: tuple[str, ...] = ()
    check: Callable[[dict], None] | None = None

    def missing_fields(self, fields: dict) -> list[str]:
        """Required fields absent from ``fields``."""
        return [f for f in self.required if f not in fields]

    def unknown_fields(self, fields: dict) -> list[tuple[str, list[str]]]:
        """Fields the implementation does not take, each with close accepted names."""
        if self.accepted is None:
            return []
        return [(f, difflib.get_close_matches(f, self.accepted, n=2, cutoff=0.6))
                for f in fields if f not in self.accepted]


@dataclass
class Registry:
    """A plain dict of name -> :class:`Entry`, filled by the :meth:`register` decorator.

    Args:
        kind: what the names are, for messages ("setup step", "getter", "metric", "agent", "provider").
        group: the :data:`BUILTIN_MODULES` group that fills it.
        skip: names of the implementation's leading parameters that the dispatcher supplies
            (e.g. ``("ctx",)`` for setup steps, ``("result", "expected")`` for metrics); the
            remaining parameters are the JSON fields.
        strip_prefix: removed from the function name to form the default JSON name
            (``get_`` for getters, so ``get_vm_file`` is ``vm_file``).
    """

    kind: str
    skip: tuple[str, ...] = ()
    strip_prefix: str = ""
    group: str = "task"
    entries: dict[str, Entry] = field(default_factory=dict)

    def register(self, name: str | None = None, *, status: str = SUPPORTED, note: str = "",
                 host_paths: tuple[str, ...] = (), aliases: tuple[str, ...] = (),
                 check: Callable[[dict], None] | None = None) -> Callable:
        """Decorator adding a function under ``name`` (default: its name less ``strip_prefix``).

        ``check`` validates a task's fields for this name at load time (see :class:`Entry`).

        Raises:
            ValueError: the name is already registered, or the status is unknown.
        """
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; expected one of {STATUSES}")

        def deco(func: Callable) -> Callable:
            key = name or func.__name__.removeprefix(self.strip_prefix)
            required, accepted = self._fields_of(func)
            for k in (key, *aliases):
                self.add(Entry(k, func, status, note, required, accepted, tuple(host_paths), check))
            return func
        return deco

    def add(self, entry: Entry) -> None:
        """Add one entry; a duplicate name is refused."""
        if entry.name in self.entries:
            raise ValueError(f"duplicated {self.kind} {entry.name!r} "
                             f"(already {self.entries[entry.name].func.__module__}."
                             f"{self.entries[entry.name].func.__qualname__})")
        self.entries[entry.name] = entry

    def _fields_of(self, func: Callable) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
        params = list(inspect.signature(func).parameters.values())
        required, accepted, var_kw = [], [], False
        for p in params:
            if p.name in self.skip:
                continue
            if p.kind is p.VAR_KEYWORD:
                var_kw = True
            elif p.kind is p.VAR_POSITIONAL:
                continue
            else:
                accepted.append(p.name)
                if p.default is p.empty:
                    required.append(p.name)
        return tuple(required), (None if var_kw else tuple(accepted))

    # -- lookup ---------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        _ensure_loaded(self.group)
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        _ensure_loaded(self.group)
        return iter(sorted(self.entries))

    def __len__(self) -> int:
        _ensure_loaded(self.group)
        return len(self.entries)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        _ensure_loaded(self.group)
        return sorted(self.entries)

    def suggest(self, name: str) -> list[str]:
        """Registered names close to ``name`` (difflib), best first."""
        _ensure_loaded(self.group)
        return difflib.get_close_matches(str(name), list(self.entries), n=3, cutoff=0.6)

    def get(self, name: str, path=None, field: str | None = None) -> Entry:
        """The entry for ``name``.

        Raises:
            UnknownNameError: no such name (with a did-you-mean, the file and the field).
        """
        _ensure_loaded(self.group)
        try:
            return self.entries[name]
        except (KeyError, TypeError):
            raise UnknownNameError(self.kind, str(name), self.suggest(name),
                                   path=None if path is None else str(path), field=field) from None

    def __getitem__(self, name: str) -> Callable:
        return self.get(name).func


#: Setup (config/postconfig) steps of the "type/parameters" spelling: ``step(ctx, **parameters)``.
SETUP_STEPS = Registry("setup step", skip=("ctx",))
#: Getters: ``getter(ctx, **fields)`` where the fields are the GETTER object less ``type``.
GETTERS = Registry("getter", skip=("ctx",), strip_prefix="get_")
#: Metrics: ``metric(result, expected, **options)`` returning a float in [0, 1].
METRICS = Registry("metric", skip=("result", "expected"))
#: Config steps of the "func/arguments" spelling: ``func(task=TaskSpec, agent=ctx, **arguments)``.
CONFIG_DISPATCH = Registry("config func", skip=("task", "agent"))
#: Whole evaluators of the "func/arguments" spelling: ``func(task=TaskSpec, agent=ctx, **arguments)``.
EVAL_DISPATCH = Registry("evaluation func", skip=("task", "agent"))

#: Agents by model name: ``agent_class(**options)`` (desktop_env.agents.register_agent).
AGENTS = Registry("agent", group="agent")
#: How a model that is no built-in agent is driven (``--agent`` kinds): ``factory(model, **options)``.
AGENT_KINDS = Registry("agent kind", group="agent")
#: VM providers by name: ``provider_class(**options)`` (desktop_env.providers.base.register_provider).
PROVIDERS = Registry("provider", group="provider")

#: The registries task files name entries of.
ALL_REGISTRIES = (SETUP_STEPS, GETTERS, METRICS, CONFIG_DISPATCH, EVAL_DISPATCH)

_load_lock = threading.RLock()
_loaded: set[str] = set()


def _ensure_loaded(group: str) -> None:
    """Import the built-in modules of ``group`` once, so its registries are full."""
    if group in _loaded:
        return
    with _load_lock:
        if group in _loaded:
            return
        _loaded.add(group)  # first: the modules' own lookups must not recurse into loading
        try:
            for mod in BUILTIN_MODULES[group]:
                importlib.import_module(mod)
        except BaseException:
            _loaded.discard(group)
            raise
        logger.debug("%s registries loaded", group)
