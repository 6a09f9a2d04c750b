"""The committed index files agree with the tasks they list: pairs, guidance and cloud accounts."""
import json
from pathlib import Path

import pytest

from desktop_env.tasks import load_tasks_from_index

EXAMPLES = Path(__file__).resolve().parents[2] / "evaluation_examples"


def _ids(name: str) -> set[str]:
    return {t for ids in json.loads((EXAMPLES / name).read_text()).values() for t in ids}


@pytest.fixture(scope="module")
def every_task():
    return {t.id: t for t in load_tasks_from_index(EXAMPLES / "test_all.json")}


def test_every_task_has_a_twin_of_the_other_guidance(every_task):
    assert len(every_task) >= 120
    for t in every_task.values():
        twin = every_task.get(t.counterpart)
        assert twin is not None and twin.counterpart == t.id, f"{t.id}: counterpart {t.counterpart!r} is not its twin"
        mine = {g for g in t.tags if g in ("verbose", "abstract")}
        theirs = {g for g in twin.tags if g in ("verbose", "abstract")}
        assert len(mine) == 1 and mine != theirs, t.id
        assert t.extra.get("solution"), f"{t.id} has no reference solution"


def test_guidance_indexes_split_test_all(every_task):
    verbose, abstract = _ids("test_verbose.json"), _ids("test_abstract.json")
    assert verbose | abstract == set(every_task) and not verbose & abstract
    for tid in verbose:
        assert "verbose" in every_task[tid].tags, tid
    for tid in abstract:
        assert "abstract" in every_task[tid].tags, tid


def test_account_tasks_are_exactly_those_needing_an_account(every_task):
    account, non_account = _ids("test_account.json"), _ids("test_non_account.json")
    assert account and account | non_account == set(every_task) and not account & non_account
    for tid, t in every_task.items():
        assert t.needs_account == (tid in account), tid
    assert not account & (_ids("test_smoke.json") | _ids("test_data.json"))
