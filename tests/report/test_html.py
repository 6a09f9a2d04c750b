"""The static HTML report: every relative link resolves, a page per task, steps and recordings."""
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from PIL import Image
from report_fixtures import T_CALC_OK, T_OS_TRIALS


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.links.append(v)


def _links(page: Path) -> list[str]:
    p = _Links()
    p.feed(page.read_text())
    return p.links


def test_every_link_is_relative_and_resolves(fake_report):
    pages = [fake_report.index, *fake_report.task_pages.values()]
    assert len(fake_report.task_pages) == 10
    for page in pages:
        for link in _links(page):
            url = urlparse(link)
            assert not url.scheme and not link.startswith("/"), f"{page.name}: absolute link {link}"
            target = (page.parent / unquote(url.path)).resolve()
            assert target.exists(), f"{page.name}: broken link {link}"


def test_index_links_every_task_page_and_shows_the_plots(fake_report):
    links = _links(fake_report.index)
    for key in fake_report.task_pages:
        assert f"tasks/{key}.html" in links
    for plot in fake_report.plots.values():
        assert f"assets/{plot.name}" in links
        with Image.open(plot) as im:
            assert im.format == "PNG" and im.width > 300
    text = fake_report.index.read_text()
    assert 'id="task-list"' in text and 'data-filter="status"' in text


def test_task_page_shows_steps_annotated_screenshots_and_the_recording(fake_report, fake_results):
    key = next(k for k in fake_report.task_pages if T_CALC_OK in k)
    page = fake_report.task_pages[key]
    html = page.read_text()
    assert html.count('class="step"') == 3
    assert "=SUM(A1:A9)" in html
    shots = sorted((page.parent / key).glob("step_*.jpg"))
    assert [s.name for s in shots] == ["step_1.jpg", "step_2.jpg", "step_3.jpg"]
    recording = next(fake_results.rglob(f"{T_CALC_OK}/recording.mp4"), None)
    if recording is not None:  # made with ffmpeg when it is installed
        assert (page.parent / key / "recording.mp4").read_bytes() == recording.read_bytes()
        assert f'src="{key}/recording.mp4"' in html


def test_a_task_page_says_why_its_score_is_what_it_is(fake_report):
    key = next(k for k in fake_report.task_pages if T_OS_TRIALS in k and k.endswith("trial2"))
    html = fake_report.task_pages[key].read_text()
    assert "<th>why</th>" in html and "value_mismatch: compare_text_file: line 2: expected &#x27;total 42&#x27;" in html
    other = next(k for k in fake_report.task_pages if T_OS_TRIALS in k and not k.endswith("trial2"))
    assert "total 41" not in fake_report.task_pages[other].read_text()  # the successful trial has no such reason
