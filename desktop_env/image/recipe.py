"""Declarative image recipes (profiles) and the hashes that key their cached layers."""
from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop_env.errors import ImageBuildError
from desktop_env.image.digest import json_digest
from desktop_env.image.node_apps import NodeAppSpec, locked_package_locks
from desktop_env.paths import repo_root

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"

#: Bumped when the package-layer procedure changes in a way that changes its output.
PACKAGE_LAYER_VERSION = "1"
#: Bumped when the final assembly procedure changes.
ASSEMBLY_VERSION = "1"

_SCREEN = re.compile(r"^(\d{3,5})x(\d{3,5})$")


def parse_screen(text: str) -> tuple[int, int]:
    """Parse ``WIDTHxHEIGHT``; raises ValueError with the expected form."""
    match = _SCREEN.match(str(text).strip())
    if not match:
        raise ValueError(f"screen size {text!r} is not of the form WIDTHxHEIGHT, e.g. 1920x1080")
    width, height = int(match.group(1)), int(match.group(2))
    if not (640 <= width <= 4096 and 480 <= height <= 2160):
        raise ValueError(f"screen size {text!r} is outside 640x480 .. 4096x2160")
    return width, height


@dataclass
class VenvSpec:
    """One guest virtual environment: where it lives and what goes in it."""

    name: str
    path: str
    requirements: list[str]
    system_site_packages: bool = False
    expose: list[str] = field(default_factory=list)
    no_deps: bool = False  # install exactly the listed pins, no dependency resolution


@dataclass
class Recipe:
    """A profile loaded from ``profiles/<name>.toml`` (with ``extends`` merged in)."""

    name: str
    description: str
    source: Path
    memory_mb: int
    cpus: int
    disk_size_gb: int
    screen: str
    server_port: int
    cdp_port: int
    kernel_cmdline: str
    ready_check: str
    suite: str
    components: list[str]
    packages: list[str]
    python_version: str
    venvs: list[VenvSpec]
    assembly_files: list[Path]
    assembly_scripts: list[Path]
    lock_path: Path
    parents: list[str] = field(default_factory=list)
    #: The profile this one extends (built on its package layer), or None.
    extends: str | None = None
    #: Debian packages this profile adds to its parent's (all of ``packages`` when it extends nothing).
    own_packages: list[str] = field(default_factory=list)
    #: Names of the venvs this profile declares itself (not inherited).
    own_venv_names: list[str] = field(default_factory=list)
    #: Mount /proc, /dev and /dev/shm (in a private mount namespace) while the assembly scripts run.
    chroot_mounts: bool = False
    #: Node.js apps this profile's own layer installs (``[node.apps.<name>]``, only in a profile that extends another).
    node_apps: list[NodeAppSpec] = field(default_factory=list)

    @property
    def layer_venvs(self) -> list[VenvSpec]:
        """The venvs this profile's own package layer installs (and its lock pins): all of them
        for a root profile, only its own for one that extends another."""
        if not self.extends:
            return self.venvs
        return [v for v in self.venvs if v.name in self.own_venv_names]

    # -- loading ----------------------------------------------------------------------
    @classmethod
    def load(cls, profile: str, profiles_dir: Path = PROFILES_DIR) -> "Recipe":
        """Load a profile by name.

        Raises:
            ImageBuildError: unknown profile (lists the known ones) or a malformed recipe.
        """
        data, chain = _load_merged(profile, profiles_dir, [])
        src = profiles_dir / f"{profile}.toml"
        try:
            prof = data["profile"]
            deb = data["debian"]
            venvs = []
            for vname, v in data.get("python", {}).get("venvs", {}).items():
                reqs = list(v.get("requirements", []))
                if v.get("requirements_file"):
                    req_file = repo_root() / v["requirements_file"]
                    if not req_file.exists():
                        raise ImageBuildError("recipe", f"{src}: python.venvs.{vname}.requirements_file "
                                                        f"{req_file} does not exist")
                    reqs += [l.split("#")[0].strip() for l in req_file.read_text().splitlines()
                             if l.split("#")[0].strip()]
                venvs.append(VenvSpec(vname, v["path"], reqs, bool(v.get("system_site_packages", False)),
                                      list(v.get("expose", [])), bool(v.get("no_deps", False))))
            asm = data.get("assembly", {})
            own = tomllib.loads(src.read_text())
            extends = own.get("profile", {}).get("extends")
            own_packages = sorted(set(own.get("debian", {}).get("packages", []))) if extends else sorted(set(deb["packages"]))
            own_venv_names = list(own.get("python", {}).get("venvs", {}))
            node_apps = [NodeAppSpec.from_table(name, table, src)
                         for name, table in own.get("node", {}).get("apps", {}).items()]
            if node_apps and not extends:
                raise ImageBuildError("recipe", f"{src}: node.apps are installed on a layer derived from another "
                                                "profile's; declare them in a profile with `extends`")
            return cls(
                name=profile,
                description=prof.get("description", ""),
                source=src,
                memory_mb=int(prof.get("memory_mb", 3072)),
                cpus=int(prof.get("cpus", 2)),
                disk_size_gb=int(prof.get("disk_size_gb", 16)),
                screen=str(prof.get("screen", "1920x1080")),
                server_port=int(prof.get("server_port", 5000)),
                cdp_port=int(prof.get("cdp_port", 9222)),
                kernel_cmdline=str(prof["kernel_cmdline"]),
                ready_check=str(prof.get("ready_check", "true")),
                suite=str(deb.get("suite", "bookworm")),
                components=list(deb.get("components", ["main"])),
                packages=sorted(set(deb["packages"])),
                python_version=str(deb.get("python_version", "3.11.2")),
                venvs=venvs,
                assembly_files=[profiles_dir / f for f in asm.get("files", [])],
                assembly_scripts=[profiles_dir / s for s in asm.get("script", [])],
                lock_path=profiles_dir / f"{profile}.lock.json",
                parents=chain[:-1],
                extends=extends,
                own_packages=own_packages,
                own_venv_names=own_venv_names,
                chroot_mounts=bool(asm.get("chroot_mounts", False)),
                node_apps=node_apps,
            )
        except KeyError as exc:
            raise ImageBuildError("recipe", f"{src}: missing required key {exc}") from exc

    @staticmethod
    def available(profiles_dir: Path = PROFILES_DIR) -> list[str]:
        """Names of the profiles in the repository."""
        return sorted(p.stem for p in profiles_dir.glob("*.toml"))

    # -- lock -------------------------------------------------------------------------
    def read_lock(self) -> dict | None:
        """The committed lock, or None when the profile has none yet."""
        if not self.lock_path.exists():
            return None
        return json.loads(self.lock_path.read_text())

    def locked_pins(self) -> dict[str, list[dict]] | None:
        """Pins per venv from the lock, or None if the lock is missing or stale
        (its requirements differ from the recipe's)."""
        lock = self.read_lock()
        if not lock or lock.get("python_version") != self.python_version:
            return None
        pins = {}
        for venv in self.layer_venvs:
            entry = lock.get("venvs", {}).get(venv.name)
            if not entry or entry.get("requirements") != venv.requirements:
                return None
            pins[venv.name] = entry["pins"]
        return pins

    def locked_node_apps(self) -> dict[str, dict] | None:
        """package-lock.json per Node.js app from the lock, or None if missing or stale (an app's
        spec differs from the recipe's)."""
        return locked_package_locks(self.read_lock() or {}, self.node_apps)

    # -- hashes -----------------------------------------------------------------------
    def package_hash(self, mirror: str, parent_hash: str | None = None) -> str:
        """Key of the package layer: Debian packages, mirror, suite, venv pins.

        A profile that ``extends`` another is keyed by its parent's package hash
        (``parent_hash``, required then) plus what it adds; a root profile's key does not
        depend on any other profile.
        """
        if self.extends:
            if not parent_hash:
                raise ImageBuildError("recipe", f"{self.source}: profile {self.name!r} extends {self.extends!r}; "
                                                "its package hash needs the parent's package hash")
            return json_digest({
                "v": PACKAGE_LAYER_VERSION, "parent": parent_hash, "suite": self.suite, "mirror": mirror,
                "packages": self.own_packages,
                "venvs": [{"name": v.name, "path": v.path, "ssp": v.system_site_packages,
                           "requirements": v.requirements, "no_deps": v.no_deps} for v in self.layer_venvs],
                "lock": self.locked_pins(),
                **({"node_apps": [asdict(a) for a in self.node_apps], "node_lock": self.locked_node_apps()}
                   if self.node_apps else {}),
            })
        payload = {
            "v": PACKAGE_LAYER_VERSION,
            "suite": self.suite, "components": self.components, "mirror": mirror,
            "packages": self.packages,
            "venvs": [{"name": v.name, "path": v.path, "ssp": v.system_site_packages,
                       "requirements": v.requirements, "no_deps": v.no_deps} for v in self.venvs],
            "lock": self.locked_pins(),
        }
        return json_digest(payload)

    def assembly_hash(self, package_hash: str, screen: str, auth: bool, machine_abi: str) -> str:
        """Key of the final image: package layer + server code + configuration + ready-state inputs."""
        h = hashlib.sha256()
        h.update(json.dumps({
            "v": ASSEMBLY_VERSION, "package": package_hash, "screen": screen, "auth": auth,
            "abi": machine_abi, "memory": self.memory_mb, "cpus": self.cpus, "disk": self.disk_size_gb,
            "cmdline": self.kernel_cmdline, "ready_check": self.ready_check, "port": self.server_port, "cdp": self.cdp_port,
            "expose": {v.name: v.expose for v in self.venvs},
        }, sort_keys=True).encode())
        for tree in [repo_root() / "vm_server", *self.assembly_files, *self.assembly_scripts]:
            _hash_tree(h, tree)
        return h.hexdigest()[:16]


def _load_merged(profile: str, profiles_dir: Path, seen: list[str]) -> tuple[dict, list[str]]:
    path = profiles_dir / f"{profile}.toml"
    if not path.exists():
        known = ", ".join(Recipe.available(profiles_dir)) or "none"
        raise ImageBuildError("recipe", f"unknown profile {profile!r} (no {path}); known profiles: {known}")
    if profile in seen:
        raise ImageBuildError("recipe", f"profile {profile!r} extends itself through {' -> '.join(seen)}")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ImageBuildError("recipe", f"{path} is not valid TOML: {exc}") from exc
    parent = data.get("profile", {}).get("extends")
    if not parent:
        data.setdefault("assembly", {})
        asm = data["assembly"]
        asm["files"] = [asm["files"]] if isinstance(asm.get("files"), str) else list(asm.get("files", []))
        asm["script"] = [asm["script"]] if isinstance(asm.get("script"), str) else list(asm.get("script", []))
        return data, [profile]
    base, chain = _load_merged(parent, profiles_dir, seen + [profile])
    merged = json.loads(json.dumps(base))
    merged["profile"].update({k: v for k, v in data.get("profile", {}).items() if k != "extends"})
    deb = data.get("debian", {})
    merged["debian"]["packages"] = list(base["debian"]["packages"]) + list(deb.get("packages", []))
    for key in ("suite", "components", "python_version"):
        if key in deb:
            merged["debian"][key] = deb[key]
    merged.setdefault("python", {}).setdefault("venvs", {}).update(data.get("python", {}).get("venvs", {}))
    asm = data.get("assembly", {})
    for key in ("files", "script"):
        extra = asm.get(key, [])
        merged["assembly"][key] = merged["assembly"].get(key, []) + ([extra] if isinstance(extra, str) else extra)
    if "chroot_mounts" in asm:
        merged["assembly"]["chroot_mounts"] = asm["chroot_mounts"]
    return merged, chain + [profile]


def _hash_tree(h, path: Path) -> None:
    path = Path(path)
    if path.is_file():
        h.update(path.name.encode())
        h.update(b"x" if path.stat().st_mode & 0o111 else b"-")  # git keeps only the executable bit
        h.update(path.read_bytes())
        return
    if not path.exists():
        h.update(b"<missing>" + str(path).encode())
        return
    for sub in sorted(path.rglob("*")):
        if "__pycache__" in sub.parts or sub.suffix == ".pyc" or not sub.is_file():
            continue
        h.update(str(sub.relative_to(path)).encode())
        h.update(b"x" if sub.stat().st_mode & 0o111 else b"-")
        h.update(sub.read_bytes())
