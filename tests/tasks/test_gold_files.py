"""Every metric of our own suites that compares a result file with a gold file, fed the real files:
the gold file against itself scores 1.0, the task's start file (or no file) against the gold 0.0."""
from __future__ import annotations

from pathlib import Path

import pytest

from desktop_env.registry import METRICS
from desktop_env.tasks import load_tasks_from_index

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "evaluation_examples/test_all.json"


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
            if expected is None or expected.type != "local_file":
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


SAVED_BY_CALC = ROOT / "tests/data/calc_saved"


def _calc_gui_pairs():
    from evaluation_examples.generators import calc

    return calc.gui_pairs()


@pytest.mark.parametrize("pair", _calc_gui_pairs(), ids=lambda p: p["name"])
def test_calc_golds_accept_what_libreoffice_saved(pair):
    """The gold of each Calc GUI task accepts the workbook LibreOffice saved at the end of its reference
    solution (tests/data/calc_saved: a real file, so a gold written by openpyxl is checked against Calc's
    way of writing charts, conditional formats, validations and formulas)."""
    from evaluation_examples.generators.common import EXAMPLES, task_id

    saved = SAVED_BY_CALC / f"{pair['name']}.xlsx"
    assert saved.is_file(), f"no saved workbook for {pair['name']} in {SAVED_BY_CALC} (see its README)"
    evaluator = pair["evaluator"]
    folder = EXAMPLES / pair["app"] / task_id(pair, "verbose")
    gold = folder / evaluator["expected"]["path"].split("/")[-1]
    assert METRICS[evaluator["func"]](str(saved), str(gold), **evaluator["options"]) == 1.0


@pytest.mark.parametrize("pair", _calc_gui_pairs(), ids=lambda p: p["name"])
def test_calc_solutions_wait_for_text_only_the_save_writes(pair):
    """A Calc solution's last wait (the saved file holds some text) must not hold on the start workbook,
    or the replay ends before Calc has saved (the AutoFilter task once waited for 'autoFilter', which
    openpyxl's workbook.xml already says)."""
    from desktop_env.envs.locate import file_contains
    from evaluation_examples.generators.common import EXAMPLES, task_id

    folder = EXAMPLES / pair["app"] / task_id(pair, "verbose")
    start = next(s for s in pair["config"] if s["type"] == "copyfile_from_host_to_guest")["parameters"]["src"]
    waits = [s["for"]["contains"] for s in pair["solution"] if s.get("gui") == "wait" and "contains" in s["for"]]
    assert waits, "the solution waits for the saved file"
    saved = (SAVED_BY_CALC / f"{pair['name']}.xlsx").read_bytes()
    for text in waits:
        assert not file_contains((folder / start.split("/")[-1]).read_bytes(), text), f"the start file holds {text!r}"
        assert file_contains(saved, text), f"Calc's saved workbook lacks {text!r}"


SAVED_BY_OFFICE = ROOT / "tests/data/office_saved"
#: The file each office app's tasks open and save, by the ``app`` of their pairs.
OFFICE_FILES = {"writer": "report.docx", "impress": "review.pptx"}


def _office_pairs():
    from evaluation_examples.generators import impress, writer

    return writer.pairs() + impress.pairs()


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
        scores.append(METRICS[name](str(result), want, **options))
    return max(scores) if ev.conj == "or" else min(scores)


@pytest.mark.parametrize("pair", _office_pairs(), ids=lambda p: p["name"])
def test_office_evaluators_pass_what_the_app_saved_and_fail_the_start(pair):
    """Each Writer and Impress task's evaluator scores the file the app saved at the end of the reference
    solution 1.0 (tests/data/office_saved: real files, saved by LibreOffice 7.4.7 as in the office image)
    and the start file 0.0; the solution's last wait (the saved file holds, or lacks, some text) holds on
    the saved file only, or the replay could end before the app has saved."""
    from desktop_env.envs.locate import file_contains
    from desktop_env.tasks import load_task
    from evaluation_examples.generators.common import EXAMPLES, task_id

    name = OFFICE_FILES[pair["app"]]
    saved = SAVED_BY_OFFICE / f"{pair['name']}{Path(name).suffix}"
    assert saved.is_file(), f"no saved file for {pair['name']} in {SAVED_BY_OFFICE} (see its README)"
    folder = EXAMPLES / pair["app"] / task_id(pair, "verbose")
    task = load_task(folder)
    start = folder / name
    assert _score(task, saved) == 1.0
    assert _score(task, start) == 0.0
    waits = [s["for"] for s in pair["solution"] if s.get("gui") == "wait" and "file" in s["for"]]
    assert waits, "the solution waits for the saved file"
    for wait in waits:
        text, present = (wait["contains"], True) if "contains" in wait else (wait["lacks"], False)
        assert file_contains(start.read_bytes(), text) != present, f"the start file already meets {wait}"
        assert file_contains(saved.read_bytes(), text) == present, f"the saved file does not meet {wait}"
