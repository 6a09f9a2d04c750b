"""The fabricated report in headless Chromium: loads from file://, filters, shows a task's steps."""
from browser_checks import check_report_in_browser
from report_fixtures import T_CALC_OK


def test_report_in_a_real_browser(chromium, fake_report):
    key = next(k for k in fake_report.task_pages if T_CALC_OK in k)
    check_report_in_browser(chromium, fake_report, "agent_fail", key, n_steps=3)


def test_plots_load_in_the_browser(chromium, fake_report):
    page = chromium.new_page()
    try:
        page.goto(fake_report.index.resolve().as_uri())
        imgs = page.locator(".plots img")
        assert imgs.count() == len(fake_report.plots)
        for i in range(imgs.count()):
            assert imgs.nth(i).evaluate("el => el.complete && el.naturalWidth") > 0
    finally:
        page.close()
