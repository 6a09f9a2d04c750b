"""Prepared downloads without a VM: `desktop-env mirror` fills a folder from task files in both spellings
through a local HTTP server standing in for the internet, then serves them with the server stopped."""
from __future__ import annotations

import http.server
import json
import threading

import pytest

from desktop_env.cli import main as cli_main
from desktop_env.configs import steps
from desktop_env.configs.mirror import MANIFEST, Mirror, MirrorError
from desktop_env.evaluators.getters.file import get_cloud_file
from desktop_env.harness.options import parse_args
from desktop_env.session import SetupContext
from desktop_env.tasks import load_task
from desktop_env.tasks.urls import suite_urls, task_urls

ID_A, ID_B = "6d1f0b9e-0000-4000-8000-00000000000a", "6d1f0b9e-0000-4000-8000-00000000000b"


class Web:
    """A local web server whose pages a test can change: path (with query) -> (bytes, headers)."""

    def __init__(self):
        self.pages: dict[str, tuple[bytes, dict]] = {}
        self.hits: list[str] = []
        web = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server API
                web.hits.append(self.path)
                body, headers = web.pages.get(self.path, (None, {}))
                self.send_response(200 if body is not None else 404)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body or b"not found")

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def web():
    w = Web()
    w.pages["/data/sales.csv"] = (b"region,amount\nnorth,10\n", {})
    w.pages["/uc?id=1AbCdEf&export=download"] = (b"gold,1\n", {"Content-Disposition": 'attachment; filename="gold.csv"'})
    w.pages["/gold/other.txt"] = (b"other gold\n", {})
    yield w
    w.stop()


def write_suite(root, base_url):
    """Two task files: type/parameters (download + cloud_file with multi) and func/arguments (download)."""
    examples = root / "evaluation_examples" / "examples" / "app"
    task_a = {"id": ID_A, "instruction": "use the sales file", "source": [f"{base_url}/not/fetched.html"],
              "config": [{"type": "download", "parameters": {"files": [
                  {"url": f"{base_url}/data/sales.csv", "path": "/home/user/sales.csv"}]}}],
              "evaluator": {"func": "compare_csv", "result": {"type": "vm_file", "path": "/home/user/out.csv",
                                                              "dest": "out.csv"},
                            "expected": {"type": "cloud_file", "multi": True, "gives": [0],
                                         "path": [f"{base_url}/uc?id=1AbCdEf&export=download",
                                                  f"{base_url}/gold/other.txt"],
                                         "dest": ["gold.csv", "other.txt"]}}}
    task_b = {"id": ID_B, "instruction": "the same file again",
              "config": [{"func": "download", "arguments": {"files": [
                  {"url": f"{base_url}/data/sales.csv", "path": "/tmp/sales.csv"}]}}],
              "evaluation": {"func": "compare_csv", "arguments": {"vm_result": "/tmp/out.csv",
                                                                 "local_expected": "gold.csv"}}}
    for task in (task_a, task_b):
        folder = examples / task["id"]
        folder.mkdir(parents=True)
        (folder / f"{task['id']}.json").write_text(json.dumps(task))
    (examples / ID_B / "gold.csv").write_text("gold,1\n")
    index = root / "evaluation_examples" / "test_mirror.json"
    index.write_text(json.dumps({"app": [ID_A, ID_B]}))
    return index


def test_the_urls_of_both_spellings_are_found_and_nothing_else(tmp_path, web):
    index = write_suite(tmp_path, web.url)
    uses, errors = suite_urls(index)
    assert not errors
    assert sorted(uses) == sorted([f"{web.url}/data/sales.csv", f"{web.url}/uc?id=1AbCdEf&export=download",
                                   f"{web.url}/gold/other.txt"])
    assert len(uses[f"{web.url}/data/sales.csv"]) == 2  # both tasks, both spellings
    task = load_task(tmp_path / "evaluation_examples/examples/app" / ID_A / f"{ID_A}.json")
    assert [w for _, w in task_urls(task)] == ["config[0].parameters.files[0].url", "evaluator.expected.path[0]",
                                              "evaluator.expected.path[1]"]
    assert sorted(suite_urls(index.parent / "examples")[0]) == sorted(uses)  # a folder gives the same


def test_mirror_fills_then_serves_with_the_server_stopped(tmp_path, web, capsys):
    index = write_suite(tmp_path, web.url)
    out = tmp_path / "mirror"
    assert cli_main(["mirror", str(index), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "[3/3]" in printed and "fetched 3" in printed
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    drive = manifest[f"{web.url}/uc?id=1AbCdEf&export=download"]
    assert drive["path"].endswith("-gold.csv") and drive["size"] == 7 and len(drive["sha256"]) == 64
    web.stop()
    ctx = SetupContext(controller=None, task=None, cache_dir=tmp_path / "cache", download_mirror=Mirror.open(out))
    assert steps.fetch_bytes(f"{web.url}/data/sales.csv", ctx) == b"region,amount\nnorth,10\n"
    gold = get_cloud_file(ctx, path=[f"{web.url}/uc?id=1AbCdEf&export=download", f"{web.url}/gold/other.txt"],
                          dest=["g.csv", "o.txt"], multi=True, gives=[0, 1])
    assert [p.read_bytes() for p in gold] == [b"gold,1\n", b"other gold\n"]


def test_a_url_missing_from_the_mirror_and_an_altered_file_are_named(tmp_path, web):
    index = write_suite(tmp_path, web.url)
    out = tmp_path / "mirror"
    assert cli_main(["mirror", str(index), "--out", str(out)]) == 0
    ctx = SetupContext(controller=None, task=None, cache_dir=tmp_path / "cache", download_mirror=Mirror.open(out))
    hits = len(web.hits)
    with pytest.raises(MirrorError) as missing:
        steps.fetch_bytes(f"{web.url}/data/new.csv", ctx)
    message = str(missing.value)
    assert f"{web.url}/data/new.csv" in message and str(out / "files") in message and "desktop-env mirror" in message
    assert len(web.hits) == hits  # no network access with a mirror
    entry = Mirror.open(out).entries[f"{web.url}/data/sales.csv"]
    (out / entry["path"]).write_bytes(b"region,amount\nnorth,99\n")
    with pytest.raises(MirrorError, match="hash mismatch"):
        steps.fetch_bytes(f"{web.url}/data/sales.csv", ctx)
    assert cli_main(["mirror", "verify", str(out)]) == 1
    (out / entry["path"]).unlink()
    assert cli_main(["mirror", "verify", str(out)]) == 1


def test_a_rerun_resumes_and_reports_an_upstream_change_without_overwriting(tmp_path, web, capsys):
    index = write_suite(tmp_path, web.url)
    out = tmp_path / "mirror"
    url = f"{web.url}/gold/other.txt"
    web.pages.pop(url[len(web.url):])
    assert cli_main(["mirror", str(index), "--out", str(out)]) == 1  # one URL failed: the rest is kept
    assert "FAILED" in capsys.readouterr().err
    assert sorted(Mirror.open(out).entries) == sorted([f"{web.url}/data/sales.csv",
                                                       f"{web.url}/uc?id=1AbCdEf&export=download"])
    web.pages["/gold/other.txt"] = (b"other gold\n", {})
    assert cli_main(["mirror", str(index), "--out", str(out), "--missing-only"]) == 0
    assert "fetched 1, unchanged 2" in capsys.readouterr().out
    web.pages["/gold/other.txt"] = (b"other gold, revised\n", {})
    assert cli_main(["mirror", str(index), "--out", str(out)]) == 0
    assert f"changed upstream (the old file is still served; rerun with --accept_changes to switch): {url}" \
        in capsys.readouterr().out
    mirror = Mirror.open(out)
    assert mirror.read(url) == b"other gold\n"
    assert (out / mirror.entries[url]["upstream"]["path"]).read_bytes() == b"other gold, revised\n"
    assert cli_main(["mirror", "verify", str(out)]) == 0
    assert cli_main(["mirror", str(index), "--out", str(out), "--accept_changes"]) == 0
    mirror = Mirror.open(out)
    assert mirror.read(url) == b"other gold, revised\n" and "upstream" not in mirror.entries[url]
    assert not list((out / "files").glob("*.upstream")) and not list(out.rglob("*.partial"))


def test_run_py_refuses_a_mirror_folder_without_a_manifest(tmp_path, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--download_mirror", str(tmp_path)])
    assert f"--download_mirror {tmp_path}: no {MANIFEST} there" in capsys.readouterr().err
    with pytest.raises(MirrorError, match="holds no manifest.json"):
        Mirror.open(tmp_path)
