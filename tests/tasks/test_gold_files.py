"""Every metric of our own suites that compares a result file with a gold file, fed the real files:
the gold file against itself scores 1.0, the task's start file (or no file) against the gold 0.0."""
from __future__ import annotations

from pathlib import Path

import pytest

from desktop_env.registry import METRICS
from desktop_env.tasks import load_tasks_from_index

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "evaluation_examples/test_all.json"
#: Metrics whose expected side is the task's original file, not a gold one (the result, mirrored back,
#: must be the original): the original does not pass against itself. The saved-file test below scores
#: them on what the app wrote.
AGAINST_THE_ORIGINAL = {"check_image_mirror"}


def _file_comparisons():
    """(id, metric, gold path, start path or None, options, alone) for each metric whose expected side is a
    task file; ``alone`` is false for one check of several that must all pass (``conj: "and"``), such as
    "the text is unchanged" beside the check of the change asked for, which the start file passes."""
    out = []
    for task in load_tasks_from_index(INDEX):
        ev = task.evaluator
        if ev is None:
            continue
        copies = {s.params.get("dest"): s.params.get("src") for s in task.config
                  if s.name == "copyfile_from_host_to_guest"}
        for i, name in enumerate(ev.funcs):
            expected, result = ev.expecteds[i], ev.results[i]
            if expected is None or expected.type != "local_file" or name in AGAINST_THE_ORIGINAL:
                continue
            start = copies.get(result.fields.get("path")) if result is not None else None
            gold = task.resolve_path(expected.fields["path"])
            alone = len(ev.funcs) == 1 or ev.conj == "or"
            out.append(pytest.param(name, gold, None if start is None else task.resolve_path(start), ev.options[i],
                                    alone, id=f"{task.id[:8]}-{i}-{name}"))
    return out


COMPARISONS = _file_comparisons()


def test_our_suites_have_file_comparisons():
    assert len(COMPARISONS) >= 10


@pytest.mark.parametrize("metric,gold,start,options,alone", COMPARISONS)
def test_gold_scores_one_against_itself_and_the_start_state_zero(metric, gold, start, options, alone):
    func = METRICS[metric]
    assert func(gold, gold, **options) == 1.0, f"{metric}: the gold file {gold} does not match itself"
    if alone:  # a conjunct the start passes is fine: another check of the task fails it (its noop run)
        assert func(start, gold, **options) == 0.0, f"{metric}: the start state {start} already passes"


#: Files as the app saved them at the end of a replay of each GUI pair's reference solution, one per
#: pair, named after it (each folder's README says how they were made), by the generator module.
SAVED = {"calc": ROOT / "tests/data/calc_saved", "writer": ROOT / "tests/data/office_saved",
         "impress": ROOT / "tests/data/office_saved", "gimp": ROOT / "tests/data/gimp_saved",
         "vlc": ROOT / "tests/data/vlc_saved", "vscode": ROOT / "tests/data/vscode_saved",
         "thunderbird": ROOT / "tests/data/thunderbird_saved"}


def _saved_file_pairs():
    from evaluation_examples.generators import calc, gimp, impress, thunderbird, vlc, vscode, writer

    return (calc.gui_pairs() + writer.pairs() + impress.pairs() + gimp.pairs() + vlc.pairs() + vscode.pairs()
            + thunderbird.pairs())


def _score(task, result: Path) -> float:
    """The task's evaluator on a local result file: each metric against its gold file or rule."""
    ev = task.evaluator
    scores = []
    for name, expected, options in zip(ev.funcs, ev.expecteds, ev.options):
        if expected is None:
            want = None
        elif expected.type == "local_file":
            want = str(task.resolve_path(expected.fields["path"]))
        else:
            want = expected.fields["rules"]
        scores.append(METRICS[name](Path(result), want, **options))  # a Path, as getters hand files over
    return max(scores) if ev.conj == "or" else min(scores)


@pytest.mark.parametrize("pair", _saved_file_pairs(), ids=lambda p: p["name"])
def test_evaluators_pass_what_the_app_saved_and_fail_the_start(pair):
    """Each GUI pair whose app saves a file (Calc, Writer, Impress, GIMP, VLC, the editor, Thunderbird): its evaluator scores the file the app
    saved at the end of the reference solution 1.0 (a real file, so a gold or rule written with a Python
    library is checked against the app's way of writing charts, styles, breaks or slide sizes) and the
    start file 0.0; the solution's waits for the saved file (it holds, or lacks, some text) hold on the
    saved file only, or the replay could end before the app has saved (the AutoFilter task once waited
    for 'autoFilter', which openpyxl's workbook.xml already says; the portrait deck for a height the
    start deck's notes page already had)."""
    from desktop_env.replay.locate import file_contains
    from desktop_env.tasks import load_task
    from evaluation_examples.generators.common import EXAMPLES, task_id

    folder = EXAMPLES / pair["app"] / task_id(pair, "verbose")
    task = load_task(folder)
    getter = task.evaluator.results[0]
    from evaluation_examples.generators import vlc

    guest_path = getter.fields.get("path") or {"vlc_config": vlc.VLCRC}[getter.type]  # getters naming no path
    copied = next(s.params["src"] for s in task.config
                  if s.name == "copyfile_from_host_to_guest" and s.params["dest"] == guest_path)
    start = task.resolve_path(copied)
    saved = SAVED[pair["app"]] / f"{pair['name']}{Path(guest_path).suffix or '.' + Path(guest_path).name}"
    assert saved.is_file(), f"no saved file for {pair['name']} in {saved.parent} (see its README)"
    assert _score(task, saved) == 1.0, f"the evaluator fails what the app saved ({saved})"
    assert _score(task, start) == 0.0, f"the evaluator passes the start file ({start})"
    waits = [s["for"] for s in pair["solution"] if s.get("gui") == "wait" and "file" in s["for"]]
    assert waits, "the solution waits for the saved file"
    for wait in waits:
        text, present = (wait["contains"], True) if "contains" in wait else (wait["lacks"], False)
        assert file_contains(start.read_bytes(), text) != present, f"the start file already meets {wait}"
        assert file_contains(saved.read_bytes(), text) == present, f"the saved file does not meet {wait}"
