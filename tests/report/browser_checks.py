"""Checks of a built report in a real browser, shared by the fabricated and the real-run tests."""
from __future__ import annotations


def check_report_in_browser(browser, report, status_to_filter: str, task_key: str, n_steps: int) -> None:
    """Open the report from disk: the task list is complete, filtering by status narrows it to
    exactly the tasks with that status, the text filter works, and a task page shows its steps."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(report.index.resolve().as_uri())
        rows = page.locator("#task-list tbody tr")
        total = rows.count()
        assert total == len(report.results)
        assert page.locator("#shown-count").inner_text() == f"{total} of {total} tasks shown"
        page.select_option("#filter-status", status_to_filter)
        visible = page.locator("#task-list tbody tr:visible")
        want = sum(r.status == status_to_filter for r in report.results)
        assert 0 < want < total, "pick a status that narrows the list"
        assert visible.count() == want
        for i in range(visible.count()):
            assert visible.nth(i).get_attribute("data-status") == status_to_filter
        assert page.locator("#shown-count").inner_text() == f"{want} of {total} tasks shown"
        page.select_option("#filter-status", "")
        target = next(r for r in report.results if r.key == task_key)
        page.fill("#filter-text", target.task_id)
        assert 1 <= page.locator("#task-list tbody tr:visible").count() < total
        page.fill("#filter-text", "")
        page.click(f'a[href="tasks/{task_key}.html"]')
        page.wait_for_load_state()
        assert page.url.endswith(f"tasks/{task_key}.html")
        steps = page.locator("div.step")
        assert steps.count() == n_steps
        for i in range(n_steps):
            img = steps.nth(i).locator("img")
            if img.count():
                # naturalWidth > 0 only when the image file loaded from disk
                assert img.evaluate("el => el.complete && el.naturalWidth") > 0
        assert not errors, errors
    finally:
        page.close()
