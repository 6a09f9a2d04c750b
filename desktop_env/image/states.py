"""Warm states: an image's ``init_state`` plus a tool already started, saved once and restored in a second.

A profile declares its states as JSON files ``profiles/<profile>/states/<name>.json`` (a profile
also has the states of the profiles it extends)::

    {"description": "Superset's welcome page in Chromium, logged in as admin",
     "config": [ ...setup steps, as in a task's "config"... ],
     "settle": {"timeout_s": 600}}

A built state lives in its image's folder under ``states/<name>/``: ``state.bin`` (the RAM,
the same format as ``init_state.bin``), ``disk.qcow2`` (the disk writes of the recipe, a frozen
copy-on-write layer over the image's disk, referenced by a relative path so the folder can be
exported) and ``state.json`` (recipe hash, sizes, build time). A state whose recipe or image
changed is stale and is rebuilt on its next use. Building runs setup steps in a VM, so it lives
with the environment (:mod:`desktop_env.envs.warm`); this module only reads, locks, commits and
removes states.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from desktop_env.errors import DesktopEnvError
from desktop_env.image.recipe import PROFILES_DIR, Recipe
from desktop_env.paths import allocated

if TYPE_CHECKING:  # pragma: no cover
    from desktop_env.image.store import ImageInfo

log = logging.getLogger(__name__)

#: Bumped when the way a state is built or stored changes (every state is then rebuilt).
WARM_FORMAT = "1"
#: Sub-folder of an image folder holding its built states.
STATES_DIR = "states"
#: The name of the image's own ready state (not a warm state).
INIT_STATE = "init_state"
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
#: Default settle limits of a recipe (``settle`` overrides each).
DEFAULT_SETTLE = {"timeout_s": 600, "stable_n": 3, "interval_s": 2.0, "busy_below": 0.5}


class StateNotFound(DesktopEnvError):
    """A named warm state is not declared by the image's profile (the message lists those that are)."""


@dataclass(frozen=True)
class StateRecipe:
    """How a warm state is made: setup steps run on ``init_state``, then a wait for the screen and CPU to settle.

    Attributes:
        name: the state's name (``superset``).
        profile: the profile whose folder declares it.
        description: one line for ``image list``.
        config: setup steps in the task-file format (decoded JSON, checked when the state is built).
        settle: ``timeout_s``, ``stable_n``, ``interval_s``, ``busy_below`` (see :data:`DEFAULT_SETTLE`).
        path: the recipe file.
        extends: the state whose steps run first (its ``config`` is then already at the head of
            ``config``, and its ``settle`` applies unless this recipe has its own), or None.
    """

    name: str
    profile: str
    description: str
    config: list
    settle: dict = field(default_factory=dict)
    path: Path | None = None
    extends: str | None = None

    def digest(self, image: ImageInfo) -> str:
        """Hash of what the state depends on: this recipe, the image it starts from, the format."""
        body = json.dumps({"format": WARM_FORMAT, "image": image.name, "config": self.config,
                           "settle": self.settle}, sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @classmethod
    def from_file(cls, path: Path, profile: str) -> "StateRecipe":
        """Read one recipe file.

        Raises:
            DesktopEnvError: unreadable JSON, a bad name, or missing/mistyped fields (naming the file and field).
        """
        path = Path(path)
        name = path.stem
        if not _NAME.match(name):
            raise DesktopEnvError(f"{path}: a warm state's name must be 1-32 lower-case letters, digits, '_' or '-' "
                                  f"starting with a letter; rename the file")
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise DesktopEnvError(f"{path}: not readable JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise DesktopEnvError(f"{path}: must hold a JSON object with 'description' and 'config'")
        config = data.get("config")
        if not isinstance(config, list) or not config:
            raise DesktopEnvError(f"{path}: 'config' must be a non-empty list of setup steps")
        settle = data.get("settle") or {}
        unknown = sorted(set(settle) - set(DEFAULT_SETTLE))
        if not isinstance(settle, dict) or unknown:
            raise DesktopEnvError(f"{path}: 'settle' must be an object with keys among "
                                  f"{', '.join(DEFAULT_SETTLE)} (unknown: {', '.join(unknown)})")
        extra = sorted(set(data) - {"description", "config", "settle", "extends"})
        if extra:
            raise DesktopEnvError(f"{path}: unknown field(s) {', '.join(extra)} (a state recipe has description, "
                                  "config, settle and extends)")
        extends = data.get("extends")
        if extends is not None and not (isinstance(extends, str) and _NAME.match(extends)):
            raise DesktopEnvError(f"{path}: 'extends' must name another warm state of the profile, e.g. \"airflow\"")
        return cls(name, profile, str(data.get("description", "")), config, dict(settle), path, extends)

    def settle_value(self, key: str) -> float:
        """One settle limit, from the recipe or the default."""
        return float(self.settle.get(key, DEFAULT_SETTLE[key]))


def state_recipes(profile: str, profiles_dir: Path = PROFILES_DIR) -> dict[str, StateRecipe]:
    """The warm states a profile declares, with those of the profiles it extends (its own win), by name.

    A profile this repository does not have (another suite's image) declares none.
    """
    if profile not in Recipe.available(profiles_dir):
        return {}
    chain = Recipe.load(profile, profiles_dir).parents + [profile]
    read: dict[str, StateRecipe] = {}
    for prof in chain:
        folder = profiles_dir / prof / STATES_DIR
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            read[path.stem] = StateRecipe.from_file(path, prof)
    return {name: _with_parents(read[name], read) for name in read}


def _with_parents(recipe: StateRecipe, read: dict[str, StateRecipe], seen: tuple[str, ...] = ()) -> StateRecipe:
    """``recipe`` with the steps of the state it extends (and of that one's, and so on) ahead of its own."""
    if recipe.extends is None:
        return recipe
    if recipe.extends not in read:
        raise DesktopEnvError(f"{recipe.path}: 'extends' names {recipe.extends!r}, which is not a warm state of "
                              f"profile {recipe.profile}; its states: {', '.join(sorted(read))}")
    if recipe.name in seen:
        raise DesktopEnvError(f"{recipe.path}: warm states extend each other in a circle: "
                              f"{' -> '.join(seen + (recipe.name,))}")
    parent = _with_parents(read[recipe.extends], read, seen + (recipe.name,))
    return replace(recipe, config=parent.config + recipe.config, settle=recipe.settle or parent.settle)


def recipe_for(image: ImageInfo, name: str, profiles_dir: Path = PROFILES_DIR) -> StateRecipe:
    """The recipe of state ``name`` in ``image``'s profile.

    Raises:
        StateNotFound: the profile declares no such state (the message lists those it does).
    """
    recipes = state_recipes(image.profile, profiles_dir)
    if name not in recipes:
        raise StateNotFound(f"image {image.name} (profile {image.profile}) has no warm state {name!r}; its states: "
                            f"{', '.join(sorted(recipes)) or 'none'}")
    return recipes[name]


#: The public data-science suite's snapshot names and the image each of its tasks runs on here (``profile`` or
#: ``profile:state``): its excel tasks on the base image; its dbt, dagster and jupyter tasks on the spider2v
#: image, whose conda environments their setups start the tools from (a warm state of ours with the tool
#: already running would collide with the one their setup starts).
SUITE_SNAPSHOTS = {"excel": "base", "dbt": "spider2v", "dagster": "spider2v", "jupyter": "spider2v"}


def parse_snapshot(value: str | None, profiles: list[str] | None = None) -> tuple[str | None, str | None]:
    """Split a task's ``snapshot`` into (profile, state).

    ``data`` -> ("data", None); ``data:airflow`` -> ("data", "airflow"); a name of the public suite's
    (:data:`SUITE_SNAPSHOTS`) -> the image it maps to (``dbt`` -> ("spider2v", None)); ``airflow`` (neither)
    -> (None, "airflow"), a bare state name resolved against the image in use; None -> (None, None).
    """
    if not value:
        return None, None
    if value in SUITE_SNAPSHOTS:
        return parse_snapshot(SUITE_SNAPSHOTS[value], profiles)
    profiles = Recipe.available() if profiles is None else profiles
    if ":" in value:
        profile, _, state = value.partition(":")
        return profile, (state or None)
    if value in profiles:
        return value, None
    return None, value


@dataclass
class WarmState:
    """A built warm state on disk.

    Attributes:
        image: the image it belongs to.
        name: the state's name.
        path: its folder (``<image>/states/<name>``).
        meta: ``state.json`` (recipe hash, sizes, build time, accelerator).
    """

    image: ImageInfo
    name: str
    path: Path
    meta: dict

    @property
    def stream_file(self) -> Path:
        """The saved device state (and, in a state saved before mapped states, the RAM), loaded with ``-incoming``."""
        return self.path / self.meta["files"]["state"]

    @property
    def ram_file(self) -> Path | None:
        """The saved RAM, mapped copy-on-write on restore; None in a state saved before mapped states."""
        name = self.meta["files"].get("ram")
        return self.path / name if name else None

    @property
    def disk_layer(self) -> Path:
        """The frozen disk layer (backed by the image's disk)."""
        return self.path / self.meta["files"]["disk"]

    @property
    def recipe_hash(self) -> str:
        return self.meta.get("recipe_hash", "")

    def is_current(self, recipe: StateRecipe) -> bool:
        """Whether it was built from this recipe on this image in this format."""
        return self.recipe_hash == recipe.digest(self.image)

    def sizes(self) -> dict[str, int]:
        """Bytes allocated on disk by the saved RAM (its file and the stream) and the disk layer."""
        ram = _allocated(self.stream_file) + (_allocated(self.ram_file) if self.ram_file else 0)
        return {"ram": ram, "disk": _allocated(self.disk_layer)}


def _allocated(path: Path) -> int:
    try:
        return allocated(path)
    except OSError:
        return 0


def states_root(image: ImageInfo) -> Path:
    """Folder of an image's built states."""
    return image.path / STATES_DIR


def load_state(image: ImageInfo, name: str) -> WarmState | None:
    """The built state ``name`` of ``image`` (current or stale), or None when there is none."""
    path = states_root(image) / name
    try:
        meta = json.loads((path / "state.json").read_text())
    except (OSError, ValueError):
        return None
    if not meta.get("ready"):
        return None
    return WarmState(image, name, path, meta)


def current_state(image: ImageInfo, recipe: StateRecipe) -> WarmState | None:
    """The built state of ``recipe`` if it is current (same recipe, image and format), else None."""
    state = load_state(image, recipe.name)
    return state if state is not None and state.is_current(recipe) else None


def list_states(image: ImageInfo) -> list[WarmState]:
    """The built states of an image (current or stale), by name."""
    root = states_root(image)
    if not root.is_dir():
        return []
    out = []
    for sub in sorted(root.iterdir()):
        if sub.is_dir() and not sub.name.endswith(".partial"):
            state = load_state(image, sub.name)
            if state is not None:
                out.append(state)
    return out


@contextlib.contextmanager
def state_lock(image: ImageInfo, name: str) -> Iterator[None]:
    """Hold the build lock of state ``name`` (one build at a time, across processes)."""
    root = states_root(image)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def partial_dir(image: ImageInfo, name: str) -> Path:
    """An empty staging folder for a state being built (any leftover of an interrupted build removed)."""
    work = states_root(image) / f"{name}.partial"
    _rmtree(work)
    work.mkdir(parents=True)
    return work


def commit_state(image: ImageInfo, recipe: StateRecipe, work: Path, build_s: float, info: dict) -> WarmState:
    """Turn a staging folder holding ``state.bin``, ``disk.qcow2`` and, for a mapped state, ``state.ram``
    into the built state, atomically.

    Args:
        work: the folder from :func:`partial_dir`, filled by the provider's capture.
        build_s: seconds the build took (restore, recipe, settle, save).
        info: extra facts to record (accelerator, settled or not, save time).
    """
    for name in ("state.bin", "disk.qcow2"):
        if not (work / name).is_file():
            raise DesktopEnvError(f"{work} lacks {name}: the capture of warm state {recipe.name} did not finish")
    meta = {
        "name": recipe.name, "ready": True, "image": image.name, "profile": recipe.profile,
        "recipe_hash": recipe.digest(image), "recipe": str(recipe.path) if recipe.path else None,
        "description": recipe.description, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_s": round(build_s, 1), "files": {"state": "state.bin", "disk": "disk.qcow2"},
        "sizes": {"state.bin": (work / "state.bin").stat().st_size,
                  "disk.qcow2": _allocated(work / "disk.qcow2")},
        **info,
    }
    if (work / "state.ram").is_file():
        meta["files"]["ram"] = "state.ram"
        meta["sizes"]["state.ram"] = _allocated(work / "state.ram")
    (work / "state.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    (work / "state.bin").chmod(0o444)
    (work / "disk.qcow2").chmod(0o444)
    final = states_root(image) / recipe.name
    _rmtree(final)
    os.replace(work, final)
    log.info("warm state %s of %s saved (RAM %d MiB, disk layer %d MiB, built in %.0f s)", recipe.name, image.name,
             (meta["sizes"]["state.bin"] + meta["sizes"].get("state.ram", 0)) >> 20, meta["sizes"]["disk.qcow2"] >> 20,
             build_s)
    return WarmState(image, recipe.name, final, meta)


def remove_state(image: ImageInfo, name: str) -> bool:
    """Delete a built state; True when there was one."""
    path = states_root(image) / name
    if not path.exists():
        return False
    _rmtree(path)
    return True


def _rmtree(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
