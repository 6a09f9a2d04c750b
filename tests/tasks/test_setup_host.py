"""Host-side parts of setup steps and getters: fetching, argument checks, account and missing-tool errors."""
from __future__ import annotations

import functools
import http.server
import sqlite3
import threading

import pytest

from desktop_env.configs import accounts, browser, steps
from desktop_env.session import AccountRequired, NotSupportedError, SetupContext, SetupError, ToolNotInImage
from desktop_env.evaluators.getters.file import get_cache_file, get_local_file
from desktop_env.registry import GETTERS, SETUP_STEPS
from desktop_env.tasks import TaskFileNotFound, load_task
from task_samples import good_task

TID = "33333333-2222-4333-8444-555555555555"


@pytest.fixture
def ctx(suite, tmp_path):
    path = suite("os", {"id": TID, "instruction": "x", "config": [], "evaluator": {"func": "infeasible"}},
                 files={"data/payload.bin": "task payload"})
    # controller=None: every call below must stay on the host
    return SetupContext(controller=None, task=load_task(path), cache_dir=tmp_path / "cache")


@pytest.fixture
def http_server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "hello.txt").write_text("hello over http")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class TestFetchBytes:
    def test_file_url(self, ctx, tmp_path):
        f = tmp_path / "abs.bin"
        f.write_bytes(b"\x00\x01abs")
        assert steps.fetch_bytes(f"file://{f}", ctx) == b"\x00\x01abs"

    def test_task_relative_path(self, ctx):
        assert steps.fetch_bytes("data/payload.bin", ctx) == b"task payload"
        assert steps.fetch_bytes(f"evaluation_examples/examples/os/{TID}/data/payload.bin", ctx) == b"task payload"

    def test_missing_relative_path(self, ctx):
        with pytest.raises(TaskFileNotFound):
            steps.fetch_bytes("data/none.bin", ctx)

    def test_http_and_cache(self, ctx, http_server):
        url = f"{http_server}/hello.txt"
        assert steps.fetch_bytes(url, ctx) == b"hello over http"
        cached = list((ctx.cache_dir / "downloads").iterdir())
        assert len(cached) == 1 and cached[0].read_bytes() == b"hello over http"

    def test_http_error(self, ctx, http_server):
        with pytest.raises(SetupError, match="could not fetch"):
            steps.fetch_bytes(f"{http_server}/missing.txt", ctx)


class TestArgumentChecks:
    def test_download_files_shape(self, ctx):
        with pytest.raises(SetupError, match="non-empty list"):
            steps.download(ctx, files=[])
        with pytest.raises(SetupError, match="'url' and 'path'"):
            steps.download(ctx, files=[{"url": "x"}])

    def test_upload_files_shape(self, ctx):
        with pytest.raises(SetupError, match="'local_path' and 'path'"):
            steps.upload_file(ctx, files=[{"path": "/x"}])

    def test_command_shape(self, ctx):
        with pytest.raises(SetupError, match="empty command"):
            steps.launch(ctx, command="  ")
        with pytest.raises(SetupError, match="list of strings"):
            steps.execute(ctx, command=[1, 2])

    def test_sleep_seconds(self, ctx):
        with pytest.raises(SetupError):
            steps.sleep(ctx, seconds=-1)
        steps.sleep(ctx, seconds=0)

    def test_copyfile_json_encode_rejects_non_json(self, ctx):
        with pytest.raises(SetupError, match="not valid JSON"):
            steps.copyfile_from_host_to_guest(ctx, src="data/payload.bin", dest="/x.json", json_encode=True)

    def test_cache_path_cannot_escape(self, ctx):
        with pytest.raises(SetupError, match="escapes"):
            ctx.cache_path("../../etc/passwd")

    def test_cdp_steps_need_a_forwarded_port(self, ctx):
        with pytest.raises(SetupError, match="cdp_port_host is None"):
            browser.chrome_open_tabs(ctx, urls_to_open=["https://example.org"])


class TestUnrunnable:
    def test_account_step_names_the_settings_file(self):
        t = load_task(good_task("bigquery"))
        ctx = SetupContext(controller=None, task=t, cache_dir=t.path.parent / ".." / ".." / ".." / ".." / ".cache-test")
        try:
            with pytest.raises(AccountRequired) as ei:
                SETUP_STEPS["bigquery_init"](ctx, **t.config[0].params)
            e = ei.value
            assert e.settings_file == "evaluation_examples/settings/bigquery/settings.json"
            assert "settings.json.template" in str(e) and "BigQuery" in str(e)
            with pytest.raises(AccountRequired, match="bigquery/settings.json"):
                GETTERS["bigquery_table_to_csv"](ctx, **t.evaluator.results[0].fields)
        finally:
            import shutil
            shutil.rmtree(ctx.cache_dir, ignore_errors=True)

    def test_account_default_settings_file(self, ctx):
        with pytest.raises(AccountRequired, match="evaluation_examples/settings/snowflake/settings.json"):
            SETUP_STEPS["snowflake_init"](ctx)

    def test_filled_settings_but_browser_only_step(self, ctx):
        root = ctx.suite_root / "evaluation_examples" / "settings" / "snowflake"
        root.mkdir(parents=True)
        (root / "settings.json").write_text("{}")
        with pytest.raises(NotSupportedError, match="does not automate vendor websites"):
            SETUP_STEPS["snowflake_login"](ctx)

    @pytest.mark.parametrize("name,tool", [("airbyte_webui_init", "Airbyte"), ("metabase_webui_init", "Metabase"),
                                           ("astro_webui_init", "Astro")])
    def test_tool_not_in_image(self, ctx, name, tool):
        with pytest.raises(ToolNotInImage, match=f"{tool}.* not installed in any image"):
            SETUP_STEPS[name](ctx, url="http://localhost", actions=[])

    @pytest.mark.parametrize("name", ["dagster_webui_init", "superset_webui_init"])
    def test_webui_init_needs_the_forwarded_cdp_port(self, ctx, name):
        # The initialisers drive the VM's Chromium over CDP; without a forwarded port they say so.
        with pytest.raises(SetupError, match="no host port is forwarded to the VM's Chromium"):
            SETUP_STEPS[name](ctx, url="http://localhost:3000", actions=[])

    def test_committed_templates_exist(self):
        from task_samples import SAMPLES
        repo = SAMPLES.parents[2]
        for p in accounts.template_paths(repo):
            assert p.is_file(), p


class TestHostGetters:
    def test_local_file(self, ctx):
        assert get_local_file(ctx, path="data/payload.bin").name == "payload.bin"
        with pytest.raises(TaskFileNotFound):
            get_local_file(ctx, path="data/none.bin")

    def test_local_file_url(self, ctx, http_server):
        p = get_local_file(ctx, path=f"{http_server}/hello.txt", dest="hello.txt")
        assert open(p).read() == "hello over http"

    def test_cache_file(self, ctx):
        assert get_cache_file(ctx, path="out.txt") is None
        (ctx.cache_dir / "out.txt").write_text("x")
        assert get_cache_file(ctx, path="out.txt") == (ctx.cache_dir / "out.txt").resolve()

    def test_runtime_cache_paths_resolve_in_the_session_cache(self, ctx):
        """``cache/<task id>/x`` and ``cache/x`` (files an earlier step downloaded) name the session's cache."""
        with pytest.raises(TaskFileNotFound, match="run-time cache"):
            get_local_file(ctx, path=f"cache/{ctx.task.id}/gold.csv")
        (ctx.cache_dir / "gold.csv").write_text("a\n1\n")
        for rel in (f"cache/{ctx.task.id}/gold.csv", "cache/gold.csv"):
            assert get_local_file(ctx, path=rel).read_text() == "a\n1\n"

    def test_rule_and_list(self, ctx):
        assert GETTERS["rule"](ctx, rules={"a": 1}) == {"a": 1}
        assert GETTERS["list"](ctx, list=[1, 2]) == [1, 2]


def test_add_history_rows(tmp_path):
    db = tmp_path / "History"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT, url LONGVARCHAR, title LONGVARCHAR,
            visit_count INTEGER DEFAULT 0 NOT NULL, typed_count INTEGER DEFAULT 0 NOT NULL,
            last_visit_time INTEGER NOT NULL, hidden INTEGER DEFAULT 0 NOT NULL);
        CREATE TABLE visits(id INTEGER PRIMARY KEY, url INTEGER NOT NULL, visit_time INTEGER NOT NULL,
            from_visit INTEGER, transition INTEGER DEFAULT 0 NOT NULL, segment_id INTEGER, visit_duration INTEGER);
    """)
    con.close()
    now = 1_700_000_000.0
    n = browser.add_history_rows(db, [
        {"url": "https://a.example/", "title": "A", "visit_time_from_now_in_seconds": 60},
        {"url": "https://a.example/", "title": "A", "visit_time_from_now_in_seconds": 10},
        {"url": "https://b.example/", "title": "B", "visit_time_from_now_in_seconds": 3600}], now_s=now)
    assert n == 3
    con = sqlite3.connect(db)
    rows = dict(con.execute("SELECT url, visit_count FROM urls").fetchall())
    assert rows == {"https://a.example/": 2, "https://b.example/": 1}
    last = con.execute("SELECT last_visit_time FROM urls WHERE url = 'https://a.example/'").fetchone()[0]
    assert last == int((now - 10 + 11644473600) * 1e6)
    assert con.execute("SELECT COUNT(*) FROM visits").fetchone()[0] == 3
    con.close()
