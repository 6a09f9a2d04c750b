"""URL downloads end to end on a real VM, a local HTTP server standing in for the internet.

Online: run.py fetches each task's URLs (both spellings, a Google-Drive-style link and plain URLs) through
the host while the server is up; the oracle scores 1.0, and a URL the server does not have ends its task
with a task_error naming the URL and the task file. Prepared: `desktop-env mirror` fills a folder from the
same task files, the server is stopped, and run.py runs the tasks from the mirror: the oracle scores 1.0,
a URL the mirror lacks and an altered file end the task with a task_error that names them."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/tasks"))
from test_mirror_host import Web  # noqa: E402

PLAIN, FUNC, LATE = ("7a2e4c10-0000-4000-8000-0000000000%02d" % i for i in (1, 2, 3))
SALES = b"region,amount\nnorth,10\nsouth,32\n"


def tasks(url: str) -> dict[str, dict]:
    """Three tasks that copy a downloaded CSV into place: scored against a gold file fetched by URL
    (type/parameters spelling, cloud_file) or shipped with the task (func/arguments spelling); the
    third downloads a URL that is added to the task after the mirror was made."""
    copy = [{"command": "cp /home/user/mirror/sales.csv /home/user/mirror/out.csv", "shell": True}]
    plain = {"id": PLAIN, "snapshot": "base", "instruction": "Copy ~/mirror/sales.csv to ~/mirror/out.csv.",
             "tags": ["cli", "verbose"], "solution": copy,
             "config": [{"type": "download", "parameters": {"files": [
                 {"url": f"{url}/data/sales.csv", "path": "/home/user/mirror/sales.csv"}]}}],
             "evaluator": {"func": "compare_csv",
                           "result": {"type": "vm_file", "path": "/home/user/mirror/out.csv", "dest": "out.csv"},
                           "expected": {"type": "cloud_file", "path": f"{url}/uc?id=1GoLd&export=download",
                                        "dest": "gold.csv"}}}
    func = {"id": FUNC, "snapshot": "base", "instruction": "Copy ~/mirror/sales.csv to ~/mirror/out.csv.",
            "tags": ["cli", "abstract"], "solution": copy,
            "config": [{"func": "download", "arguments": {"files": [
                {"url": f"{url}/data/sales.csv", "path": "/home/user/mirror/sales.csv"}]}}],
            "evaluation": {"func": "compare_csv", "arguments": {"vm_result": "/home/user/mirror/out.csv",
                                                               "local_expected": "gold.csv"}}}
    late = json.loads(json.dumps(plain).replace("/data/sales.csv", "/data/late.csv"))
    late["id"] = LATE
    return {PLAIN: plain, FUNC: func, LATE: late}


def serve_sales() -> Web:
    """A local web server with the sales CSV and the Google-Drive-style gold link (not late.csv)."""
    web = Web()
    web.pages["/data/sales.csv"] = (SALES, {})
    web.pages["/uc?id=1GoLd&export=download"] = (SALES, {"Content-Disposition": 'attachment; filename="gold.csv"'})
    return web


def write(base: Path, task: dict) -> None:
    folder = base / "examples" / "os" / task["id"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{task['id']}.json").write_text(json.dumps(task))
    (folder / "gold.csv").write_bytes(SALES)


def run(result_dir: Path, index: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "run.py", "--model", "oracle", "--result_dir", str(result_dir),
                           "--test_all_meta_path", str(index), "--test_config_base_dir", str(index.parent), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)


def status(result_dir: Path, task_id: str) -> dict:
    return json.loads((result_dir / "pyautogui/screenshot/oracle/os" / task_id / "status.json").read_text())


def test_tasks_fetch_their_urls_through_the_host_and_a_missing_one_is_named(base_image, tmp_path):
    web = serve_sales()
    base = tmp_path / "suite" / "evaluation_examples"
    for task in tasks(web.url).values():  # the late task's URL is one the server does not have
        write(base, task)
    index = base / "test_online.json"
    index.write_text(json.dumps({"os": [PLAIN, FUNC, LATE]}))
    try:
        proc = run(tmp_path / "online", index, "--path_to_vm", base_image.name)
    finally:
        web.stop()
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # 1: the late task's task_error
    for task_id in (PLAIN, FUNC):
        assert status(tmp_path / "online", task_id)["score"] == 1.0, status(tmp_path / "online", task_id)
    assert {"/data/sales.csv", "/uc?id=1GoLd&export=download", "/data/late.csv"} <= set(web.hits)
    missing = status(tmp_path / "online", LATE)
    assert missing["status"] == "task_error", missing
    assert f"{web.url}/data/late.csv" in missing["error"] and "404" in missing["error"], missing
    assert f"{LATE}.json" in missing["error"], missing


def test_tasks_run_from_the_mirror_with_the_server_stopped(base_image, tmp_path):
    web = serve_sales()
    base = tmp_path / "suite" / "evaluation_examples"
    all_tasks = tasks(web.url)
    for task_id in (PLAIN, FUNC):
        write(base, all_tasks[task_id])
    index = base / "test_mirror.json"
    index.write_text(json.dumps({"os": [PLAIN, FUNC]}))
    mirror = tmp_path / "mirror"
    try:
        fill = subprocess.run([sys.executable, "-m", "desktop_env", "mirror", str(index), "--out", str(mirror)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert fill.returncode == 0 and "fetched 2" in fill.stdout, fill.stdout + fill.stderr
    finally:
        web.stop()

    write(base, all_tasks[LATE])  # a task written after the mirror was made
    index.write_text(json.dumps({"os": [PLAIN, FUNC, LATE]}))
    first = tmp_path / "first"
    proc = run(first, index, "--path_to_vm", base_image.name, "--download_mirror", str(mirror))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # 1: the late task's task_error
    for task_id in (PLAIN, FUNC):
        assert status(first, task_id)["score"] == 1.0, status(first, task_id)
    late = status(first, LATE)
    assert late["status"] == "task_error" and f"{web.url}/data/late.csv" in late["error"], late
    assert str(mirror / "files") in late["error"] and "desktop-env mirror" in late["error"], late

    manifest = json.loads((mirror / "manifest.json").read_text())["files"]
    (mirror / manifest[f"{web.url}/data/sales.csv"]["path"]).write_bytes(SALES.replace(b"32", b"33"))
    index.write_text(json.dumps({"os": [PLAIN]}))
    second = tmp_path / "second"
    proc = run(second, index, "--path_to_vm", base_image.name, "--download_mirror", str(mirror))
    altered = status(second, PLAIN)
    assert altered["status"] == "task_error" and "hash mismatch" in altered["error"], altered
