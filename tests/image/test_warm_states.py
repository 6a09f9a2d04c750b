"""Warm states without a VM: recipes, the snapshot field, storage (commit, staleness, export/import), run planning."""
import json
import logging
import tarfile
import dataclasses
from argparse import Namespace
from pathlib import Path

import pytest

from desktop_env.errors import DesktopEnvError, TaskConfigError
from desktop_env.harness.config import RunConfig
from desktop_env.harness.jobs import Job
from desktop_env.image import states as st
from desktop_env.image.store import ImageInfo, export_image, import_image

EVAL = {"func": "infeasible"}


def _task(snapshot):
    from desktop_env.tasks import TaskSpec

    return TaskSpec.from_json({"id": "t1", "instruction": "do it", "snapshot": snapshot, "evaluator": EVAL})


def _jobs(*snapshots) -> list[Job]:
    return [Job("os", f"t{i}", 1, Path("t.json"), Path(f"results/t{i}"), _task(s)) for i, s in enumerate(snapshots)]


def _image(root: Path, name="base-0123456789abcdef", profile="base") -> ImageInfo:
    """A ready image folder with small stand-in files (enough for the store; no VM can boot it)."""
    path = root / "images" / name
    path.mkdir(parents=True)
    for f in ("disk.qcow2", "init_state.bin", "vmlinuz", "initrd.img"):
        (path / f).write_bytes(b"x" * 100)
    meta = {"name": name, "profile": profile, "ready": True, "created": "2026-11-26T00:00:00+0000",
            "screen": "1920x1080", "auth": True, "files": {"disk": "disk.qcow2", "state": "init_state.bin"}}
    (path / "metadata.json").write_text(json.dumps(meta))
    return ImageInfo.load(path)


def _recipe(name="citest", config=None, settle=None) -> st.StateRecipe:
    return st.StateRecipe(name, "base", "a test state",
                          config or [{"type": "execute", "parameters": {"command": ["true"]}}], settle or {})


def _fake_build(image, recipe) -> st.WarmState:
    work = st.partial_dir(image, recipe.name)
    (work / "state.bin").write_bytes(b"r" * 4096)
    (work / "disk.qcow2").write_bytes(b"d" * 4096)
    return st.commit_state(image, recipe, work, 12.5, {"accel": "tcg", "settled": True})


# -- recipes -----------------------------------------------------------------------------------

def test_profiles_declare_their_states_and_inherit_their_parents():
    base = st.state_recipes("base")
    data = st.state_recipes("data")
    assert {"chromium", "calc", "jupyter"} <= set(base)
    assert {"superset", "dagster", "airflow"} <= set(data)
    assert set(base) <= set(data), "data extends base: it has base's states too"
    assert data["chromium"].profile == "base" and data["superset"].profile == "data"
    assert st.state_recipes("libreoffice_calc") == {}, "a name of another suite's snapshot declares nothing"


def test_every_declared_recipe_is_a_valid_list_of_setup_steps():
    from desktop_env.envs.warm import recipe_task

    for profile in ("base", "data"):
        for recipe in st.state_recipes(profile).values():
            task = recipe_task(recipe)
            assert task.config, recipe.path
            assert recipe.description, f"{recipe.path}: a state needs a description for `image list`"


@pytest.mark.parametrize("text, fragment", [
    ("{not json", "not readable JSON"),
    ('{"description": "x"}', "'config' must be a non-empty list"),
    ('{"config": [{"type": "sleep", "parameters": {"seconds": 1}}], "extra": 1}', "unknown field(s) extra"),
    ('{"config": [{"type": "sleep", "parameters": {"seconds": 1}}], "settle": {"timeout": 5}}', "unknown: timeout"),
])
def test_a_malformed_recipe_file_is_refused_naming_the_file_and_field(tmp_path, text, fragment):
    path = tmp_path / "mystate.json"
    path.write_text(text)
    with pytest.raises(DesktopEnvError) as err:
        st.StateRecipe.from_file(path, "base")
    assert fragment in str(err.value) and str(path) in str(err.value)


def test_a_recipe_with_an_unknown_step_fails_when_it_is_checked(tmp_path):
    from desktop_env.envs.warm import recipe_task

    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"description": "x", "config": [{"type": "launch_rocket", "parameters": {}}]}))
    with pytest.raises(TaskConfigError, match="launch_rocket"):
        recipe_task(st.StateRecipe.from_file(path, "base"))


def test_a_bad_state_name_is_refused(tmp_path):
    path = tmp_path / "Bad Name.json"
    path.write_text('{"config": [{"type": "sleep", "parameters": {"seconds": 1}}]}')
    with pytest.raises(DesktopEnvError, match="rename the file"):
        st.StateRecipe.from_file(path, "base")


# -- the snapshot field ------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    (None, (None, None)), ("data", ("data", None)), ("base", ("base", None)),
    ("data:airflow", ("data", "airflow")), ("airflow", (None, "airflow")), ("libreoffice_calc", (None, "libreoffice_calc")),
    # the public data-science suite's names: its excel tasks on base, dbt/dagster/jupyter on spider2v (its conda)
    ("excel", ("base", None)), ("dbt", ("spider2v", None)), ("jupyter", ("spider2v", None)),
])
def test_parse_snapshot(value, expected):
    assert st.parse_snapshot(value) == expected


def test_a_profile_state_snapshot_keeps_the_profile_and_names_the_state():
    task = _task("data:superset")
    assert task.image_profile == "data" and task.warm_state == "superset"
    task = _task("airflow")
    assert task.image_profile is None and task.warm_state == "airflow"
    assert _task("data").warm_state is None


def test_a_missing_profile_state_is_a_load_error_listing_the_states():
    with pytest.raises(TaskConfigError) as err:
        _task("data:supersett")
    text = str(err.value)
    assert "snapshot" in text and "supersett" in text
    for name in ("airflow", "dagster", "superset", "chromium"):
        assert name in text
    with pytest.raises(TaskConfigError, match="image profile 'ofice'"):
        _task("ofice:writer")


def test_a_bare_name_the_image_lacks_falls_back_with_a_warning(tmp_path, caplog):
    from desktop_env.envs.warm import state_for_task

    image = _image(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert state_for_task(_task("libreoffice_calc"), image) is None
    assert "libreoffice_calc" in caplog.text and "init_state" in caplog.text
    assert state_for_task(_task("chromium"), image).name == "chromium"
    assert state_for_task(_task("base:calc"), image).name == "calc"
    assert state_for_task(_task("base"), image) is None


def test_a_profile_state_the_image_in_use_lacks_is_an_error(tmp_path):
    from desktop_env.envs.warm import state_for_task

    image = _image(tmp_path)  # a base image: no superset state
    with pytest.raises(DesktopEnvError, match="data:superset.*its states: calc, chromium, jupyter"):
        state_for_task(_task("data:superset"), image)


def test_states_needed_counts_tasks_per_state(tmp_path):
    from desktop_env.envs.warm import states_needed

    image = _image(tmp_path)
    used, missing = states_needed([_task("chromium"), _task("base:chromium"), _task("calc"), _task("gimp"),
                                   _task("base")], image)
    assert used == {"chromium": 2, "calc": 1} and missing == {"gimp": 1}


# -- storage -----------------------------------------------------------------------------------

def test_a_committed_state_is_listed_current_and_goes_stale_when_its_recipe_changes(tmp_path):
    image = _image(tmp_path)
    recipe = _recipe()
    assert st.current_state(image, recipe) is None
    state = _fake_build(image, recipe)
    assert st.current_state(image, recipe).path == state.path == image.path / "states" / "citest"
    assert [s.name for s in st.list_states(image)] == ["citest"]
    assert state.meta["recipe_hash"] == recipe.digest(image) and state.meta["build_s"] == 12.5
    assert state.meta["sizes"]["state.bin"] == 4096
    changed = _recipe(config=[{"type": "execute", "parameters": {"command": ["false"]}}])
    assert changed.digest(image) != recipe.digest(image)
    assert st.current_state(image, changed) is None, "a changed recipe makes the built state stale"
    assert st.load_state(image, "citest") is not None, "stale, but still on disk until rebuilt"


def test_a_state_of_another_image_build_is_stale(tmp_path):
    recipe = _recipe()
    old = _image(tmp_path, "base-aaaaaaaaaaaaaaaa")
    new = _image(tmp_path, "base-bbbbbbbbbbbbbbbb")
    assert recipe.digest(old) != recipe.digest(new)


def test_an_interrupted_build_leaves_nothing_that_looks_built(tmp_path):
    image = _image(tmp_path)
    work = st.partial_dir(image, "citest")
    (work / "state.bin").write_bytes(b"r")  # the capture stopped before the disk layer
    with pytest.raises(DesktopEnvError, match="lacks disk.qcow2"):
        st.commit_state(image, _recipe(), work, 1.0, {})
    assert st.load_state(image, "citest") is None and st.list_states(image) == []
    again = st.partial_dir(image, "citest")
    assert list(again.iterdir()) == [], "a new build starts from an empty staging folder"


def test_export_and_import_carry_the_built_states(tmp_path):
    image = _image(tmp_path / "a")
    _fake_build(image, _recipe())
    st.partial_dir(image, "halfway")  # a build in progress is not exported
    archive = export_image(image.name, tmp_path / "img.tar", tmp_path / "a")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert f"{image.name}/states/citest/state.bin" in names and f"{image.name}/states/citest/state.json" in names
    assert not any("halfway" in n or n.endswith(".lock") for n in names)
    imported = import_image(archive, tmp_path / "b")
    state = st.current_state(imported, _recipe())
    assert state is not None and state.stream_file.read_bytes() == b"r" * 4096 and state.ram_file is None
    assert imported.disk_usage() > image.path.joinpath("disk.qcow2").stat().st_size


def test_a_mapped_state_records_its_ram_file_and_exports_it_sparse(tmp_path):
    image = _image(tmp_path / "a")
    work = st.partial_dir(image, "citest")
    (work / "state.bin").write_bytes(b"s" * 512)  # the device state
    with open(work / "state.ram", "wb") as ram:  # 512 MiB of guest RAM, two pages written
        ram.truncate(512 << 20)
        ram.write(b"p" * 4096)
        ram.seek(300 << 20)
        ram.write(b"q" * 4096)
    (work / "disk.qcow2").write_bytes(b"d" * 4096)
    state = st.commit_state(image, _recipe(), work, 3.0, {"accel": "tcg", "ram": "mapped"})
    assert state.meta["files"] == {"state": "state.bin", "disk": "disk.qcow2", "ram": "state.ram"}
    assert state.ram_file == state.path / "state.ram" and state.stream_file == state.path / "state.bin"
    assert state.sizes()["ram"] < 1 << 20, "allocated bytes, not the RAM file's 512 MiB"
    archive = export_image(image.name, tmp_path / "img.tar", tmp_path / "a")
    assert archive.stat().st_size < 4 << 20
    copy = st.load_state(import_image(archive, tmp_path / "b"), "citest")
    assert copy.ram_file.stat().st_size == 512 << 20 and copy.sizes()["ram"] < 1 << 20
    with open(copy.ram_file, "rb") as ram:
        ram.seek(300 << 20)
        assert ram.read(4096) == b"q" * 4096


def test_remove_state(tmp_path):
    image = _image(tmp_path)
    _fake_build(image, _recipe())
    assert st.remove_state(image, "citest") is True
    assert st.remove_state(image, "citest") is False and st.list_states(image) == []


# -- run planning ------------------------------------------------------------------------------

def test_a_run_on_a_provider_without_warm_states_fails_at_plan_time(tmp_path):
    from desktop_env.harness.suite import prepare_warm_states

    lines = []
    config = RunConfig(provider_name="libvirt", cache_dir=tmp_path, path_to_vm="data")
    with pytest.raises(DesktopEnvError, match="1 tasks start from a warm state.*libvirt provider cannot"):
        prepare_warm_states(config, _jobs("data:superset", "data"), lambda line, error=False: lines.append(line))
    # bare names are wishes: they start from init_state, said once
    assert prepare_warm_states(config, _jobs("superset"), lambda line, error=False: lines.append(line)) == {}
    assert "start from init_state" in lines[-1]


def test_snapshot_name_makes_every_task_start_from_that_state(tmp_path, monkeypatch):
    """run.py --snapshot_name S: S is built before the first episode for all the tasks, whatever their own."""
    import desktop_env.envs.warm as warm
    import desktop_env.image.current as current
    from desktop_env.harness.suite import prepare_warm_states

    image = _image(tmp_path)
    built = []
    monkeypatch.setattr(current, "resolve", lambda ref, cache=None: image)
    monkeypatch.setattr(warm, "build_missing_states", lambda img, names, report, **kw: (
        built.append((img, names, kw["provider_name"])) or {n: {"reused": True, "build_s": 0.0} for n in names}))
    jobs = _jobs("chromium", "init_state", "data:superset")
    config = RunConfig(provider_name="qemu", cache_dir=tmp_path, path_to_vm="base", snapshot_name="calc")
    lines = []
    assert prepare_warm_states(config, jobs, lambda line, error=False: lines.append(line)) == {
        "calc": {"tasks": 3, "reused": True, "build_s": 0.0}}
    assert built == [(image, ["calc"], "qemu")] and "calc (3 tasks)" in lines[-1]
    with pytest.raises(DesktopEnvError, match="--snapshot_name calc: the libvirt provider has no warm states"):
        prepare_warm_states(dataclasses.replace(config, provider_name="libvirt"), jobs, lines.append)


def test_a_profile_state_task_runs_on_its_profile_image_only():
    from desktop_env.harness.jobs import split_by_image

    runnable, skipped = split_by_image(_jobs("data:superset", "chromium"), {"profile": "base"})
    assert len(runnable) == 1 and skipped == {"data": 1}


# -- command line ------------------------------------------------------------------------------

def test_image_warm_names_the_states_of_the_image_when_one_is_unknown(tmp_path, capsys):
    from desktop_env.cli import main

    image = _image(tmp_path)
    assert main(["image", "warm", "--image", str(image.path), "--state", "supersett"]) == 1
    err = capsys.readouterr().err
    assert "no warm state 'supersett'" in err and "calc, chromium, jupyter" in err


def test_image_list_shows_built_and_unbuilt_states(tmp_path, capsys):
    from desktop_env.cli import main

    image = _image(tmp_path)
    _fake_build(image, st.state_recipes("base")["chromium"])
    assert main(["image", "list", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "state chromium" in out and "RAM" in out and "disk layer" in out
    assert "state calc" in out and "not built" in out
    assert main(["image", "list", "--json", "--cache-dir", str(tmp_path)]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)[0]["states"]}
    assert rows["chromium"]["built"] and rows["chromium"]["current"] and not rows["calc"]["built"]
    assert main(["image", "warm", "--image", str(image.path), "--state", "chromium", "--remove"]) == 0
    assert "chromium: removed" in capsys.readouterr().out and st.load_state(image, "chromium") is None


def _write_states(folder: Path, states: dict) -> Path:
    """Recipe files of a profile ``p`` under ``folder`` (the tests make ``p`` a known profile)."""
    (folder / "p" / "states").mkdir(parents=True)
    for name, body in states.items():
        (folder / "p" / "states" / f"{name}.json").write_text(json.dumps(body))
    return folder


def _step(command):
    return {"type": "execute", "parameters": {"command": [command]}}


def test_a_state_that_extends_another_runs_its_steps_after_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(st.Recipe, "available", classmethod(lambda cls, d=None: ["p"]))
    monkeypatch.setattr(st.Recipe, "load", classmethod(lambda cls, name, d=None: Namespace(parents=[])))
    folder = _write_states(tmp_path, {
        "tool": {"description": "the tool", "config": [_step("start-tool")], "settle": {"timeout_s": 300}},
        "tool-ran": {"description": "the tool after a run", "extends": "tool", "config": [_step("run-it")]},
        "tool-ran-twice": {"description": "two runs", "extends": "tool-ran", "config": [_step("run-again")],
                           "settle": {"timeout_s": 60}}})
    recipes = st.state_recipes("p", folder)
    assert [s["parameters"]["command"][0] for s in recipes["tool-ran"].config] == ["start-tool", "run-it"]
    assert recipes["tool-ran"].settle == {"timeout_s": 300}  # the parent's, having none of its own
    assert [s["parameters"]["command"][0] for s in recipes["tool-ran-twice"].config] == ["start-tool", "run-it",
                                                                                         "run-again"]
    assert recipes["tool-ran-twice"].settle == {"timeout_s": 60}
    image = _image(tmp_path)
    before = recipes["tool-ran"].digest(image)
    (folder / "p" / "states" / "tool.json").write_text(json.dumps(
        {"description": "the tool", "config": [_step("start-tool --fast")]}))
    assert st.state_recipes("p", folder)["tool-ran"].digest(image) != before  # a parent's change rebuilds it


@pytest.mark.parametrize("states, fragment", [
    ({"a": {"config": [{"type": "execute", "parameters": {"command": ["x"]}}], "extends": "nope"}},
     r"a\.json: 'extends' names 'nope', which is not a warm state of profile p; its states: a"),
    ({"a": {"config": [{"type": "execute", "parameters": {"command": ["x"]}}], "extends": "b"},
      "b": {"config": [{"type": "execute", "parameters": {"command": ["x"]}}], "extends": "a"}},
     r"extend each other in a circle: a -> b -> a"),
    ({"a": {"config": [{"type": "execute", "parameters": {"command": ["x"]}}], "extends": 3}},
     r"a\.json: 'extends' must name another warm state"),
])
def test_a_bad_extends_is_refused_naming_the_file(tmp_path, monkeypatch, states, fragment):
    monkeypatch.setattr(st.Recipe, "available", classmethod(lambda cls, d=None: ["p"]))
    monkeypatch.setattr(st.Recipe, "load", classmethod(lambda cls, name, d=None: Namespace(parents=[])))
    with pytest.raises(DesktopEnvError, match=fragment):
        st.state_recipes("p", _write_states(tmp_path, states))
