"""``check_python_file_by_test_suite``: a task's test function run against the agent's Python files, in a
separate, confined Python process (the files come from the guest: the test runs guest-made code)."""
from __future__ import annotations

import functools
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from desktop_env.evaluators.metrics.differences import missing_file
from desktop_env.evaluators.metrics.files_common import as_list, gold_file
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
from desktop_env.evaluators.reasons import MISSING_RESULT, RULE_FAILED, fail, shown
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)

_TEST_MEMORY_BYTES = 4 * 2**30  # address space of the test process
_TEST_FILE_BYTES = 64 * 2**20  # largest file it may write (its stdout and stderr included)
_TEST_MAX_TIMEOUT_S = 600

# Runs inside the child process: limits itself first, then loads the test file and calls its function.
_TEST_RUNNER = """\
import importlib.util, json, os, resource, sys
work, test_file, func_name, tag, cpu_s, mem_bytes, file_bytes = sys.argv[1:8]
for limit, value in ((resource.RLIMIT_CPU, int(cpu_s)), (resource.RLIMIT_AS, int(mem_bytes)),
                     (resource.RLIMIT_FSIZE, int(file_bytes)), (resource.RLIMIT_CORE, 0)):
    hard = resource.getrlimit(limit)[1]
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(limit, (value, value))
os.chdir(work)
sys.path.insert(0, work)
spec = importlib.util.spec_from_file_location("test_suite", os.path.join(work, test_file))
module = importlib.util.module_from_spec(spec)
sys.modules["test_suite"] = module
spec.loader.exec_module(module)
func = getattr(module, func_name, None)
if not callable(func):
    sys.stderr.write("no function %r in %s\\n" % (func_name, test_file))
    sys.exit(3)
value = func()
if isinstance(value, bool) or not isinstance(value, (int, float)):
    score = 1.0 if value else 0.0
else:
    score = min(1.0, max(0.0, float(value)))
sys.stdout.write("\\n" + tag + json.dumps(score) + "\\n")
sys.stdout.flush()
"""


@functools.lru_cache(maxsize=1)
def _no_network_prefix() -> tuple[str, ...]:
    """The command prefix that runs a program in a new network namespace (no network at all), when this
    host allows unprivileged user namespaces; checked once. Empty (with a warning) otherwise."""
    unshare = shutil.which("unshare")
    if unshare:
        prefix = (unshare, "--user", "--map-root-user", "--net")
        try:
            probe = subprocess.run([*prefix, sys.executable, "-c", ""], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10, check=False)
            if probe.returncode == 0:
                return prefix
        except (OSError, subprocess.SubprocessError) as exc:
            logger.debug("unshare probe failed: %s", exc)
    logger.warning("check_python_file_by_test_suite: this host cannot cut a process off the network "
                   "(unshare --user --net); guest code under test runs with the host's network")
    return ()


def _test_env(work: Path) -> dict[str, str]:
    """A minimal environment: nothing of the harness's own (API keys, tokens), headless SDL and matplotlib."""
    return {
        "PATH": os.environ.get("PATH", os.defpath), "HOME": str(work), "TMPDIR": str(work),
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy",
        "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    }


def _python_files_beside(files: list[Path]) -> list[Path]:
    """The result files and the other Python files in their folders (the multi ``vm_file`` getter
    returns its first file only, but saves all of them side by side); symbolic links are skipped."""
    found: dict[str, Path] = {}
    for f in files:
        for candidate in [f, *sorted(f.parent.glob("*.py"))]:
            if candidate.is_file() and not candidate.is_symlink():
                found.setdefault(candidate.name, candidate)
    return list(found.values())


def _stop_group(proc: subprocess.Popen) -> None:
    """Kill the test's process group (the test and anything it started), then reap the test."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _tail(path: Path, limit: int = 2000) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


@METRICS.register()
def check_python_file_by_test_suite(result: Any, expected: Any, test_function_name: str = "test",
                                    timeout_s: float = 60.0) -> float:
    """Run the test function of the test file ``expected`` against the Python file(s) ``result``.

    ``result`` is the agent's file (or a list of files) fetched from the VM; the other ``.py`` files
    beside it are taken too (the suite fetches a whole program, e.g. a game's modules, and the test
    imports them). They are copied with the test file into a fresh temporary folder, and the test
    runs there in a separate Python process: the function ``test_function_name`` is called, and its
    return value is the score (True/False, or a number clamped to 0..1); an exception, a crash or a
    missing function scores 0.

    The files come from the guest, so the test runs guest-made code on the host. The process gets
    an environment with none of the harness's variables (no API keys), its own session (it and
    whatever it starts are killed at ``timeout_s``), limits on CPU time, memory and file size, no
    network when the host allows user namespaces (``unshare``), and only the temporary folder as
    its working directory; it still runs as the harness's user, so run the evaluator as an account
    that holds nothing worth protecting. The test's own imports (e.g. ``pygame``) must be installed
    on the host.

    Args:
        test_function_name: the function of the test file to call (no arguments).
        timeout_s: seconds the test may run, at most 600.

    Raises:
        MetricError: a bad option, or a test file that is missing.
    """
    if not isinstance(test_function_name, str) or not test_function_name.isidentifier():
        raise MetricError(f"check_python_file_by_test_suite: test_function_name must be a Python function name, "
                          f"got {test_function_name!r}")
    if (isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float))
            or not 0 < timeout_s <= _TEST_MAX_TIMEOUT_S):
        raise MetricError(f"check_python_file_by_test_suite: timeout_s must be a number of seconds in "
                          f"(0, {_TEST_MAX_TIMEOUT_S}], got {timeout_s!r}")
    test_file = gold_file(expected, "check_python_file_by_test_suite")
    sources = [p for p in (as_existing_path(r) for r in as_list(result)) if p is not None]
    if not sources:
        logger.info("check_python_file_by_test_suite: no result file (%r); it scores 0", result)
        return fail(MISSING_RESULT, missing_file(next(iter(as_list(result)), None)))
    test = f"{test_file.name}:{test_function_name}()"
    with tempfile.TemporaryDirectory(prefix="test-suite-") as tmp:
        work, logs = Path(tmp, "work"), Path(tmp, "logs")
        work.mkdir()
        logs.mkdir()
        for source in _python_files_beside(sources):
            shutil.copyfile(source, work / source.name)
        shutil.copyfile(test_file, work / test_file.name)
        tag = f"@@score-{secrets.token_hex(8)}@@"
        command = [*_no_network_prefix(), sys.executable, "-I", "-B", "-c", _TEST_RUNNER, str(work),
                   test_file.name, test_function_name, tag, str(int(timeout_s) + 1), str(_TEST_MEMORY_BYTES),
                   str(_TEST_FILE_BYTES)]
        out_path, err_path = logs / "stdout", logs / "stderr"
        with out_path.open("wb") as out, err_path.open("wb") as err:
            proc = subprocess.Popen(command, cwd=work, env=_test_env(work), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                returncode = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                logger.info("check_python_file_by_test_suite: the test ran over %ss; it scores 0", timeout_s)
                return fail(RULE_FAILED, f"the test {test} ran over its timeout of {timeout_s:g} s")
            finally:
                _stop_group(proc)
        scores = [line[len(tag):] for line in out_path.read_text(encoding="utf-8", errors="replace").splitlines()
                  if line.startswith(tag)]
        if returncode != 0 or not scores:
            tail = _tail(err_path).strip()
            logger.info("check_python_file_by_test_suite: the test failed (exit %s): %s", returncode, tail)
            last = tail.splitlines()[-1] if tail else "no error output"
            return fail(RULE_FAILED, f"the test {test} failed (exit {returncode}): {shown(last, 200)}")
    try:
        score = float(json.loads(scores[-1]))
    except (ValueError, TypeError):
        return fail(RULE_FAILED, f"the test {test} printed a score that is not a number: {shown(scores[-1])}")
    logger.info("check_python_file_by_test_suite: %s.%s() -> %s", test_file.name, test_function_name, score)
    score = min(1.0, max(0.0, score))
    if score < 1.0:
        return fail(RULE_FAILED, f"the test {test} returned a score of {score:g}", score)
    return score
