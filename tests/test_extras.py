"""The package's extras: pyproject.toml declares them, the core needs none of them, the metrics that need one are
listed (recomputed here from the metric modules' code), and a task that needs a missing one is reported with the
command that installs it. The slow case installs the package in a fresh venv on a host without libvirt's headers."""
import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from desktop_env import extras
from desktop_env.registry import METRICS

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: pip package -> the module it installs, for the extras' packages
PACKAGE_MODULE = {"libvirt-python": "libvirt", "google-cloud-bigquery": "google.cloud.bigquery",
                  "snowflake-connector-python": "snowflake.connector", "pypdf": "pypdf", "rapidfuzz": "rapidfuzz",
                  "mutagen": "mutagen", "scikit-image": "skimage", "opencv-python-headless": "cv2",
                  "openai": "openai", "anthropic": "anthropic", "mcp": "mcp", "ray": "ray"}


def _name(requirement: str) -> str:
    return requirement.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip()


def test_pyproject_declares_each_extra_with_its_modules_and_the_core_needs_none():
    project = PYPROJECT["project"]
    assert project["name"] == extras.DISTRIBUTION and project["requires-python"] == ">=3.11"
    assert project["license"] == {"text": "Apache-2.0"}  # the license of the public suites whose format we read
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License\n")
    optional = project["optional-dependencies"]
    for extra, modules in extras.EXTRA_MODULES.items():
        assert sorted(PACKAGE_MODULE[_name(r)] for r in optional[extra]) == sorted(modules), extra
    assert sorted(map(_name, optional["all"])) == sorted(_name(r) for e in extras.EXTRA_MODULES for r in optional[e])
    core = {_name(r) for r in project["dependencies"]}
    assert not core & set(PACKAGE_MODULE), "an extra's package is in the core dependencies"
    assert {"pytest", "pylint", "import-linter"} <= {_name(r) for r in optional["dev"]}
    assert not core & {"pytest", "pylint", "import-linter"}


def _metrics_needing(top_modules: set[str]) -> set[str]:
    """The registered metrics whose code (or a function it calls, by name) imports one of ``top_modules``."""
    funcs: dict[str, list[tuple[set, bool]]] = {}
    for path in (ROOT / "desktop_env" / "evaluators").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            calls, direct = set(), False
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    fn = sub.func
                    name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
                    calls.add(name)
                    first = sub.args[0] if sub.args else None
                    if (name in ("require_package", "_require", "import_module") and isinstance(first, ast.Constant)
                            and str(first.value).split(".")[0] in top_modules):
                        direct = True
                elif isinstance(sub, ast.Import):
                    direct |= any(a.name.split(".")[0] in top_modules for a in sub.names)
                elif isinstance(sub, ast.ImportFrom) and sub.module:
                    direct |= sub.module.split(".")[0] in top_modules
            funcs.setdefault(node.name, []).append((calls, direct))
    need = {name for name, defs in funcs.items() if any(d for _, d in defs)}
    grew = True
    while grew:
        grew = False
        for name, defs in funcs.items():
            if name not in need and any(calls & need for calls, _ in defs):
                need.add(name)
                grew = True
    return {n for n in METRICS.names() if METRICS.get(n).func.__name__ in need}


def test_the_metrics_that_need_the_office_extra_are_listed():
    assert _metrics_needing(set(extras.EXTRA_MODULES["office"])) == set(extras.METRIC_EXTRAS["office"])


def _task_file(tmp_path: Path, metric: str) -> Path:
    folder = tmp_path / "evaluation_examples" / "examples" / "os" / "t-extra"
    folder.mkdir(parents=True)
    path = folder / "t-extra.json"
    path.write_text(json.dumps({"id": "t-extra", "instruction": "Export the report as a PDF.", "config": [],
                                "evaluator": {"func": metric,
                                              "result": {"type": "vm_file", "path": "/home/user/a.pdf",
                                                         "dest": "a.pdf"},
                                              "expected": {"type": "vm_file", "path": "/home/user/b.pdf",
                                                           "dest": "b.pdf"}}}))
    return path


def test_a_task_whose_metric_needs_a_missing_extra_is_not_runnable_with_the_command(tmp_path, monkeypatch):
    from desktop_env.tasks import load_task
    from desktop_env.tasks.offline import EXTRA, offline_blockers

    task = load_task(_task_file(tmp_path, "compare_pdfs"))
    assert not [b for b in offline_blockers(task) if b.kind == EXTRA] or not extras.installed("office")
    monkeypatch.setattr(extras, "installed", lambda extra: extra != "office")
    (blocker,) = [b for b in offline_blockers(task) if b.kind == EXTRA]
    assert str(blocker) == ("needs a part of the package that is not installed (metric compare_pdfs needs the "
                            "office extra: pip install 'desktop-env-offline[office]' (from a checkout: "
                            "pip install -e '.[office]'))")


@pytest.mark.slow
def test_pip_install_without_libvirt_headers_then_the_cli_runs(tmp_path):
    """The core installs on a host where libvirt-python cannot build (pkg-config finds no libvirt), in a venv
    of its own; the CLI answers, loads a suite, and names the extra a task needs."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {**os.environ, "PKG_CONFIG": "/bin/false", "PKG_CONFIG_PATH": str(tmp_path / "none"),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)], env=env, capture_output=True,
                         text=True, timeout=900)
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-2000:]
    python = str(venv / "bin" / "python")
    version = subprocess.run([python, "-m", "desktop_env", "--version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("desktop_env "), version.stderr
    check = subprocess.run([str(venv / "bin" / "desktop-env"), "tasks", "check",
                            str(ROOT / "evaluation_examples" / "test_smoke.json")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and "runs here: 10 of 10" in check.stdout, check.stdout + check.stderr
    one = subprocess.run([str(venv / "bin" / "desktop-env"), "tasks", "check", str(_task_file(tmp_path, "compare_pdfs"))],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "compare_pdfs needs the office extra: pip install 'desktop-env-offline[office]'" in one.stdout, \
        one.stdout + one.stderr
    assert subprocess.run([python, "-c", "import libvirt"], env=env, capture_output=True).returncode != 0
