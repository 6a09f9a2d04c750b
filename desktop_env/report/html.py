"""The static HTML report: index.html (tables, plots, a filterable task list) and one page per task."""
from __future__ import annotations

import html
import json
import logging
import os
import shutil
from pathlib import Path

from desktop_env.report.annotate import annotate_file
from desktop_env.report.results import TaskResult

logger = logging.getLogger(__name__)

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1300px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0}
.success{color:#17702a;font-weight:600}.fail{color:#b3261e;font-weight:600}
.plots img{max-width:48%;border:1px solid #ddd;margin:.3em}
.filters{margin:.5em 0}.filters input,.filters select{margin-right:.6em;padding:.2em}
.step{border:1px solid #ddd;padding:.6em;margin:.8em 0}
.step img{max-width:100%;border:1px solid #999}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;word-break:break-all;font-size:.85em}
"""

_FILTER_JS = """
(function(){
  var inputs = document.querySelectorAll('[data-filter]');
  var rows = document.querySelectorAll('#task-list tbody tr');
  function apply(){
    var shown = 0;
    rows.forEach(function(row){
      var ok = true;
      inputs.forEach(function(el){
        var v = el.value.trim().toLowerCase();
        if (!v) return;
        var field = el.getAttribute('data-filter');
        if (field === 'text') { ok = ok && row.textContent.toLowerCase().indexOf(v) >= 0; }
        else { ok = ok && (row.getAttribute('data-' + field) || '').toLowerCase() === v; }
      });
      row.style.display = ok ? '' : 'none';
      if (ok) shown++;
    });
    document.getElementById('shown-count').textContent = shown + ' of ' + rows.length + ' tasks shown';
  }
  inputs.forEach(function(el){ el.addEventListener('input', apply); el.addEventListener('change', apply); });
  apply();
})();
"""

_e = html.escape


def _page(title: str, body: str, css_href: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
            f"<link rel=\"stylesheet\" href=\"{css_href}\"></head><body>\n{body}\n</body></html>\n")


def _fmt(v) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def _table(columns: list[str], rows: list[dict], table_id: str = "", cell=None) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = "".join(cell(c, row) if cell else f"<td>{_e(_fmt(row.get(c)))}</td>" for c in columns)
        body.append(f"<tr>{cells}</tr>")
    tid = f' id="{table_id}"' if table_id else ""
    return f"<table{tid}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _status_cell(status: str) -> str:
    return f'<span class="{"success" if status == "success" else "fail"}">{_e(status)}</span>'


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.unlink()
    try:
        os.link(src, dest)  # same filesystem: no copy of a large video
    except OSError:
        shutil.copy2(src, dest)


def _reason_text(result: TaskResult) -> str | None:
    """The score's reason for a task page: ``kind: text`` (None when the folder has none)."""
    return None if result.reason is None else f"{result.reason.kind}: {result.reason}"


def _action_text(action) -> str:
    return action if isinstance(action, str) else json.dumps(action, ensure_ascii=False)


def write_task_page(result: TaskResult, out_dir: Path) -> Path:
    """``tasks/<key>.html``: the instruction, outcome, each step (the screenshot the agent
    acted on, with the action drawn) and the recording when there is one."""
    tdir = out_dir / "tasks"
    assets = tdir / result.key
    shots = result.screenshots()
    parts = [f'<p><a href="../index.html">&larr; all tasks</a></p><h1>{_e(result.domain)}/{_e(result.task_id)}</h1>',
             "<table>"]
    facts = [("run", result.run), ("trial", result.trial), ("status", result.status), ("score", result.score),
             ("why", _reason_text(result)), ("steps", result.steps), ("duration (s)", result.duration_s), ("attempts", result.attempts),
             ("category", result.category), ("tags", " ".join(result.tags)), ("error", result.error),
             ("results folder", str(result.folder))]
    for name, value in facts:
        shown = _status_cell(value) if name == "status" else _e(_fmt(value))
        parts.append(f"<tr><th>{name}</th><td>{shown}</td></tr>")
    parts.append("</table>")
    if result.instruction:
        parts.append(f"<h2>Instruction</h2><p class=\"instruction\">{_e(result.instruction)}</p>")
    if result.recording:
        _copy(result.recording, assets / "recording.mp4")
        parts.append(f'<h2>Recording</h2><video controls width="960" src="{_e(result.key)}/recording.mp4"></video>')
    parts.append(f"<h2>Steps ({len(result.trajectory)})</h2>")
    if not result.trajectory:
        parts.append("<p>No trajectory was recorded.</p>")
    previous = 0
    for step in result.trajectory:
        # the action of step n was chosen on the screenshot taken after step n-1
        before = shots.get(step.num - 1) or shots.get(previous)
        img = ""
        if before is not None:
            name = f"step_{step.num}.jpg"
            try:
                annotate_file(before, assets / name, step.parts)
                img = f'<img alt="step {step.num}" src="{_e(result.key)}/{name}">'
            except OSError as exc:
                logger.warning("cannot annotate %s: %s", before, exc)
                img = f"<p>screenshot {before.name} could not be read: {_e(str(exc))}</p>"
        previous = step.num
        struct = {k: v for k, v in step.action_struct.items() if k != "parts"}
        extra = []
        if step.parse_error:
            extra.append(f"<p class=\"fail\">parse error: {_e(str(step.parse_error))}</p>")
        for label, v in (("reward", step.reward), ("tokens in/out", f"{step.tokens_in}/{step.tokens_out}"
                          if step.tokens_in is not None else None), ("latency (s)", step.latency_s),
                         ("time", step.timestamp)):
            if v is not None:
                extra.append(f"{label}: {_e(_fmt(v))}")
        parts.append(
            f'<div class="step" id="step-{step.num}"><h3>Step {step.num}: {_e(str(struct.get("type", "")))}</h3>'
            f"<pre class=\"action\">{_e(_action_text(step.action))}</pre>"
            + (f"<p>response:</p><pre>{_e(str(step.response))}</pre>" if step.response else "")
            + f"<p>{' · '.join(extra)}</p>{img}</div>")
    log = result.folder / "runtime.log"
    if log.is_file():
        tail = log.read_text(errors="replace")[-6000:]
        parts.append(f"<h2>runtime.log (end)</h2><pre>{_e(tail)}</pre>")
    page = tdir / f"{result.key}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(_page(f"{result.domain}/{result.task_id}", "\n".join(parts), "../assets/report.css"),
                    encoding="utf-8")
    return page


def _select(field: str, label: str, values: list[str]) -> str:
    opts = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    return f'<label>{label} <select data-filter="{field}" id="filter-{field}"><option value="">all</option>{opts}</select></label>'


def write_index(results: list[TaskResult], tables: dict, plots: dict[str, Path], out_dir: Path,
                sources: list[str]) -> Path:
    """``index.html``: overall numbers, the summary tables, the plots, the failure profile
    and the task list with filters (run, app, category, status, free text)."""
    body = ["<h1>Agent run report</h1>",
            "<p>Results from: " + ", ".join(f"<code>{_e(s)}</code>" for s in sources) + "</p>"]
    for stem, title in (("overall", "Overall"), ("by_app", "By app"), ("by_category", "By category"),
                        ("by_guidance", "Verbose vs abstract instructions")):
        cols, rows = tables[stem]
        cols = [c for c in cols if not c.startswith("n_")]
        body.append(f'<h2>{title}</h2>{_table(cols, rows, "table-" + stem)}'
                    f'<p><a href="csv/{stem}.csv">{stem}.csv</a></p>')
    cols, rows = tables["failures"]
    links = {f"{r.domain}/{r.task_id}": r.key for r in results}

    def failure_cell(col, row):
        if col != "example_tasks":
            return f"<td>{_e(_fmt(row.get(col)))}</td>"
        items = [f'<a href="tasks/{_e(links[t])}.html">{_e(t)}</a>' if t in links else _e(t)
                 for t in str(row[col]).split()]
        return f"<td>{' '.join(items)}</td>"

    body.append("<h2>Failure profile</h2>" + (_table(cols, rows, "table-failures", failure_cell) if rows
                                                else "<p>No failures.</p>")
                + '<p><a href="csv/failures.csv">failures.csv</a></p>')
    body.append('<h2>Plots</h2><div class="plots">'
                + "".join(f'<img alt="{_e(n)}" src="assets/{_e(p.name)}">' for n, p in plots.items()) + "</div>")
    body.append('<h2>Tasks</h2><div class="filters">'
                '<label>search <input type="search" data-filter="text" id="filter-text"></label>'
                + _select("run", "run", sorted({r.run for r in results}))
                + _select("app", "app", sorted({r.domain for r in results}))
                + _select("category", "category", sorted({r.category for r in results}))
                + _select("status", "status", sorted({r.status for r in results}))
                + '</div><p id="shown-count"></p>')
    rows_html = []
    for r in sorted(results, key=lambda r: (r.run, r.domain, r.task_id, r.trial)):
        rows_html.append(
            f'<tr data-run="{_e(r.run)}" data-app="{_e(r.domain)}" data-category="{_e(r.category)}" '
            f'data-status="{_e(r.status)}"><td>{_e(r.run)}</td><td>{_e(r.domain)}</td>'
            f'<td><a href="tasks/{_e(r.key)}.html">{_e(r.task_id)}</a>{f" (trial {r.trial})" if r.trial > 1 else ""}</td>'
            f"<td>{_e(r.category)}</td><td>{_status_cell(r.status)}</td><td>{_e(_fmt(r.score))}</td>"
            f"<td>{r.steps}</td><td>{_e(_fmt(r.duration_s))}</td><td>{_e((r.instruction or '')[:160])}</td></tr>")
    body.append('<table id="task-list"><thead><tr><th>run</th><th>app</th><th>task</th><th>category</th>'
                "<th>status</th><th>score</th><th>steps</th><th>duration (s)</th><th>instruction</th></tr></thead>"
                f"<tbody>{''.join(rows_html)}</tbody></table>")
    body.append('<p><a href="csv/tasks.csv">tasks.csv</a></p>')
    body.append(f"<script>{_FILTER_JS}</script>")
    index = out_dir / "index.html"
    index.write_text(_page("Agent run report", "\n".join(body), "assets/report.css"), encoding="utf-8")
    return index


def write_css(out_dir: Path) -> Path:
    path = out_dir / "assets" / "report.css"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_CSS, encoding="utf-8")
    return path
