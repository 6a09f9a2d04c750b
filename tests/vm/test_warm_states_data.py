"""The data image's warm states survive a week-long clock jump: restored with the guest clock 7 days
after the state was saved, the tool's UI is still usable without signing in again, and real work
started after the restore (a run, a chart query) succeeds.

Needs a built `data` image in the cache (skips otherwise); builds the states it lacks (minutes each
under emulation, once: later runs reuse them).
"""
import sys
import time
from pathlib import Path

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.envs.warm import ensure_state
from desktop_env.providers.qemu.provider import QemuProvider

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _warm_work import do_work  # noqa: E402
from profile_vm import cached_image_or_skip  # noqa: E402

pytestmark = [pytest.mark.vm, pytest.mark.slow, pytest.mark.data]

WEEK_S = 7 * 24 * 3600
#: state -> (URL prefix of its tab, text the page shows once usable without a sign-in form)
UI = {
    "superset": ("http://localhost:8088", "Dashboards"),
    "dagster": ("http://localhost:3000", "Catalog"),
    "airflow": ("http://localhost:8080", "Dags"),
}


@pytest.fixture(scope="module")
def data_vm():
    image = cached_image_or_skip("data", "sudo desktop-env image build --profile data")
    provider = QemuProvider(image=image)
    provider.start()
    yield provider
    provider.stop()


def _reload_and_read(vm, url_prefix: str, timeout_s: float = 600) -> tuple[str, str]:
    """Reload the state's tab (its session as saved) and return (URL, visible text) once it has rendered."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://{vm.cdp.host}:{vm.cdp.port}", timeout=120_000)
        pages = [p for c in browser.contexts for p in c.pages if p.url.startswith(url_prefix)]
        assert pages, f"no tab of {url_prefix} in the state (tabs: {[p.url for c in browser.contexts for p in c.pages]})"
        page = pages[-1]
        page.reload(wait_until="load", timeout=timeout_s * 1000)
        deadline = time.monotonic() + timeout_s
        text = ""
        while time.monotonic() < deadline:
            text = page.evaluate("document.body ? document.body.innerText : ''")
            if len(text.strip()) > 40:
                break
            time.sleep(2)
        return page.url, text


@pytest.mark.parametrize("name", ["superset", "dagster", "airflow"])
def test_a_state_restored_a_week_later_is_still_signed_in_and_works(data_vm, name):
    state = ensure_state(data_vm, name)
    data_vm.restore_state(state)
    guest = PythonController(data_vm.server.host, data_vm.server.port, token=data_vm.token)
    target = time.time() + WEEK_S
    guest.set_clock(target)
    guest_now = float(guest.execute(["date", "+%s"])["output"].strip())
    assert abs(guest_now - target) < 120, "the guest clock moved a week on"

    url, text = _reload_and_read(data_vm, UI[name][0])
    assert "login" not in url.lower(), f"{name}: signed out after the clock jump ({url})"
    assert UI[name][1].lower() in text.lower(), f"{name}: the page did not render its content: {text[:300]!r}"
    do_work(name, data_vm, guest, finish=True)  # raises unless the run succeeds / the query answers
