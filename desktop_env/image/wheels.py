"""Guest Python wheels: resolved for the guest's Python by the host's pip, locked, downloaded."""
from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from desktop_env.errors import ImageBuildError

log = logging.getLogger(__name__)

_NO_MATCH = re.compile(r"No matching distribution found for ([A-Za-z0-9_.\-]+)")
#: The whole requirement pip could not satisfy, with the version range a dependency asked for.
_UNSATISFIED = re.compile(r"satisfies the requirement ([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?[^\s(]*)")


def platform_args(python_version: str) -> list[str]:
    """pip flags that select wheels for a CPython ``python_version`` guest on x86_64 glibc 2.36."""
    major, minor = python_version.split(".")[:2]
    args = ["--python-version", python_version, "--implementation", "cp",
            "--abi", f"cp{major}{minor}", "--abi", "abi3", "--abi", "none", "--only-binary=:all:"]
    for glibc_minor in range(36, 16, -1):
        args += ["--platform", f"manylinux_2_{glibc_minor}_x86_64"]
    for legacy in ("manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64", "any"):
        args += ["--platform", legacy]
    return args


#: Environment of host-side sdist builds: switches that turn a package's optional C extension off, so the
#: wheel holds only Python (logbook, which dbt-core 1.7 pins to an sdist-only 1.5).
PURE_BUILD_ENV = {"DISABLE_LOGBOOK_CEXT": "1"}


def _pip(args: list[str], log_path: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    log.debug("pip: %s", " ".join(cmd))
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if log_path:
        with open(log_path, "a") as fh:
            fh.write("$ " + " ".join(cmd) + "\n" + result.stdout + result.stderr + "\n")
    return result


def _compiled_files(wheel: Path) -> list[str]:
    """The compiled extension modules a wheel holds (none in a wheel of Python files)."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        return [n for n in zf.namelist() if n.endswith((".so", ".pyd")) or ".so." in n]


def _build_pure_wheel(spec: str, dest: Path, log_path: Path | None) -> Path:
    """Build a wheel from an sdist with the host's pip; refuse one holding compiled code.

    A wheel of Python files only may still be tagged for the host's platform (a package whose build always
    claims extensions, such as logbook with its C speedups turned off): it installs on the guest as it is.
    """
    import os

    before = set(dest.glob("*.whl"))
    result = _pip(["wheel", "--no-deps", "-w", str(dest), spec], log_path, env={**os.environ, **PURE_BUILD_ENV})
    if result.returncode != 0:
        raise ImageBuildError("python-wheels", f"could not build a wheel for {spec}",
                              ["pip", "wheel", "--no-deps", spec], result.stderr[-2000:])
    built = [w for w in set(dest.glob("*.whl")) - before]
    for wheel in built:
        compiled = _compiled_files(wheel)
        if compiled:
            wheel.unlink()
            raise ImageBuildError("python-wheels",
                                  f"{spec} has no wheel for the guest and builds compiled code on the host "
                                  f"({wheel.name}: {', '.join(compiled[:3])}); only sdists of Python files can be "
                                  "built host-side")
    return built[0] if built else dest


def resolve(requirements: list[str], python_version: str, work: Path, log_path: Path | None = None,
            no_deps: bool = False, local: Path | None = None) -> list[dict]:
    """Resolve ``requirements`` (with dependencies) for the guest.

    ``local`` is the folder of host-built wheels offered to the resolver (shared by the venvs of one lock,
    so a later venv finds what an earlier one built: pip's backtracking reports a dependency that has only
    an sdist as a conflict, not as a missing distribution, once other pins narrow it down).

    Packages that exist only as sdists are built into pure-Python wheels on the host
    and offered to the resolver through ``--find-links``.

    Returns:
        The pins: ``[{"name", "version", "source": "wheel"|"sdist"}]``, sorted by name.
    """
    local = local or work / "local-wheels"
    local.mkdir(parents=True, exist_ok=True)
    built: set[str] = {_canonical(w.name.split("-")[0]) for w in local.glob("*.whl")}
    for _ in range(40):
        report = work / "report.json"
        result = _pip(["install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
                       "--target", str(work / "target"), "--find-links", str(local),
                       *platform_args(python_version), *(["--no-deps"] if no_deps else []), *requirements],
                      log_path)
        if result.returncode == 0:
            data = json.loads(report.read_text())
            pins = []
            for item in data["install"]:
                meta = item["metadata"]
                name = _canonical(meta["name"])
                pins.append({"name": name, "version": meta["version"],
                             "source": "sdist" if name in built else "wheel"})
            return sorted(pins, key=lambda p: p["name"])
        missing = _NO_MATCH.search(result.stderr)
        if not missing:
            raise ImageBuildError("python-wheels", "pip could not resolve the guest requirements",
                                  ["pip", "install", "--dry-run", *requirements], result.stderr[-3000:])
        name = missing.group(1)
        if _canonical(name) in built:
            raise ImageBuildError("python-wheels", f"no usable distribution of {name} for the guest",
                                  None, result.stderr[-3000:])
        log.info("%s has no wheel for the guest; building a pure-Python wheel on the host", name)
        asked = _UNSATISFIED.search(result.stderr)  # a dependency's own range (logbook<1.6,>=1.5 from dbt-core)
        spec = _requirement_for(name, requirements)
        if spec == name and asked and _canonical(re.split(r"[<>=!~\[; ]", asked.group(1), 1)[0]) == _canonical(name):
            spec = asked.group(1)
        _build_pure_wheel(spec, local, log_path)
        built.add(_canonical(name))
    raise ImageBuildError("python-wheels", "too many sdist-only packages while resolving")


def _requirement_for(name: str, requirements: list[str]) -> str:
    for req in requirements:
        if _canonical(re.split(r"[<>=!~\[; ]", req, 1)[0]) == _canonical(name):
            return req
    return name


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def download(pins: list[dict], python_version: str, dest: Path, log_path: Path | None = None) -> list[Path]:
    """Fetch exactly the pinned versions into ``dest`` (wheels; sdist-only ones built host-side)."""
    dest.mkdir(parents=True, exist_ok=True)
    wheel_specs = [f"{p['name']}=={p['version']}" for p in pins if p.get("source") != "sdist"]
    sdist_specs = [f"{p['name']}=={p['version']}" for p in pins if p.get("source") == "sdist"]
    for spec in sdist_specs:
        _build_pure_wheel(spec, dest, log_path)
    if wheel_specs:
        result = _pip(["download", "--no-deps", "--dest", str(dest), *platform_args(python_version), *wheel_specs],
                      log_path)
        if result.returncode != 0:
            raise ImageBuildError("python-wheels", "pip could not download the locked guest wheels",
                                  ["pip", "download", "--no-deps", *wheel_specs[:5], "..."], result.stderr[-3000:])
    return sorted(dest.glob("*.whl"))


def lock_venvs(venvs: dict[str, list[str]], python_version: str, log_path: Path | None = None,
               no_deps: set[str] = frozenset()) -> dict:
    """Resolve every venv's requirements; the result is what ``<profile>.lock.json`` holds.

    Venvs named in ``no_deps`` get exactly their listed pins (no dependencies).
    """
    out = {"python_version": python_version, "venvs": {}}
    with tempfile.TemporaryDirectory(prefix="lock-local-wheels-") as local:
        for name, reqs in venvs.items():
            with tempfile.TemporaryDirectory(prefix=f"lock-{name}-") as tmp:
                log.info("resolving guest venv %s (%d requirements)", name, len(reqs))
                out["venvs"][name] = {"requirements": reqs,
                                      "pins": resolve(reqs, python_version, Path(tmp), log_path, name in no_deps,
                                                      Path(local))}
    return out
