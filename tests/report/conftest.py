"""Fixtures: a fabricated results folder (report_fixtures.py), its suite, and a report built from them."""
from __future__ import annotations

from pathlib import Path

import pytest
from report_fixtures import make_results, make_suite


@pytest.fixture(scope="session")
def fake_results(tmp_path_factory) -> Path:
    return make_results(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="session")
def fake_suite(tmp_path_factory) -> Path:
    return make_suite(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="session")
def fake_report(fake_results, fake_suite, tmp_path_factory):
    from desktop_env.report import build_report

    return build_report([fake_results], tmp_path_factory.mktemp("report"), tasks_root=fake_suite)


@pytest.fixture(scope="module")
def chromium():
    """Debian's chromium driven headless by Playwright (Playwright's own browsers are never downloaded).

    Module scope: while Playwright's sync API is active it keeps an asyncio loop running
    in this thread, which breaks later sync users (Playwright in the setup steps, qemu.qmp).
    """
    import shutil

    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).exists():
        pytest.fail("chromium is not installed: apt-get install chromium (listed in .ci/apt-packages.txt)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
