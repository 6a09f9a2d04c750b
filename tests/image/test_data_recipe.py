"""The data profile on the host: recipe layering, lock, layer keys, start helpers, sample data."""
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.errors import ImageBuildError
from desktop_env.image.builder import BuildOptions, ImageBuilder
from desktop_env.image.recipe import PROFILES_DIR, Recipe

DATA = PROFILES_DIR / "data"
FILES = DATA / "files"
TOOLS = ["postgres", "mariadb", "dagster", "airflow", "superset"]
MIRROR = "http://mirror.example/debian"


def test_data_extends_base_and_adds_its_own_layer():
    base, data = Recipe.load("base"), Recipe.load("data")
    assert data.extends == "base" and base.extends is None
    assert set(base.packages) < set(data.packages)
    assert set(data.own_packages) == set(data.packages) - set(base.packages)
    assert {"postgresql", "mariadb-server", "geany"} <= set(data.own_packages)
    assert [v.name for v in data.layer_venvs] == ["dbt", "dagster", "airflow", "superset"]
    assert {v.name for v in data.venvs} == {"server", "jupyter", "dbt", "dagster", "airflow", "superset"}
    assert base.layer_venvs == base.venvs
    assert data.assembly_scripts == [PROFILES_DIR / "base/assemble.sh", DATA / "assemble.sh"]
    assert data.chroot_mounts and not base.chroot_mounts
    assert data.memory_mb > base.memory_mb


def test_data_lock_pins_each_tool():
    pins = Recipe.load("data").locked_pins()
    assert pins is not None, "data.lock.json is stale: run `desktop-env image lock --profile data`"
    versions = {venv: {p["name"]: p["version"] for p in plist} for venv, plist in pins.items()}
    assert versions["dbt"]["dbt-core"].startswith("1.10."), "dbt-core 1.11+ downloads a parser at build time"
    assert {"dbt-duckdb", "dbt-postgres"} <= set(versions["dbt"])
    assert {"dagster", "dagster-webserver"} <= set(versions["dagster"])
    assert versions["airflow"]["apache-airflow"].startswith("3.")
    assert {"apache-superset", "gunicorn"} <= set(versions["superset"])
    # The guest's Python is 3.11.2: redis needs async-timeout there (a marker the host's pip misjudges).
    assert "async-timeout" in versions["superset"]


def test_derived_layer_key_follows_the_parent():
    data = Recipe.load("data")
    with pytest.raises(ImageBuildError, match="parent"):
        data.package_hash(MIRROR)
    assert data.package_hash(MIRROR, "aaaa") != data.package_hash(MIRROR, "bbbb")
    builder = ImageBuilder(BuildOptions(profile="data", mirror=MIRROR))
    base_hash = Recipe.load("base").package_hash(MIRROR)
    assert builder.package_hash() == data.package_hash(MIRROR, base_hash)
    assert ImageBuilder(BuildOptions(profile="base", mirror=MIRROR)).package_hash() == base_hash


def test_data_files_change_only_the_data_assembly():
    base, data = Recipe.load("base"), Recipe.load("data")
    base_asm = base.assembly_hash("p", "1920x1080", True, "abi")
    data_asm = data.assembly_hash("p", "1920x1080", True, "abi")
    probe = FILES / "_hash_probe.txt"
    try:
        probe.write_text("changed")
        assert base.assembly_hash("p", "1920x1080", True, "abi") == base_asm
        assert data.assembly_hash("p", "1920x1080", True, "abi") != data_asm
    finally:
        probe.unlink()


@pytest.mark.parametrize("tool", TOOLS)
def test_start_helper_is_valid_sh_and_allowed_by_sudoers(tool):
    helper = FILES / "usr/local/bin" / f"start-{tool}"
    assert helper.stat().st_mode & stat.S_IXUSR, f"{helper} is not executable"
    subprocess.run(["sh", "-n", str(helper)], check=True)
    sudoers = (FILES / "etc/sudoers.d/desktop-env-data").read_text()
    assert f"/usr/local/bin/start-{tool}" in sudoers
    for unit in [w for w in helper.read_text().split() if w.startswith("desktop-env-") and w.endswith(".service")]:
        assert (FILES / "etc/systemd/system" / unit).is_file(), f"{helper} starts {unit}, which the image lacks"


def _lib(script: str) -> subprocess.CompletedProcess:
    lib = FILES / "usr/local/lib/desktop-env/start-lib.sh"
    return subprocess.run(["sh", "-c", f". {lib}; {script}"], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PATH": "/usr/bin:/bin"})


def test_wait_until_returns_once_the_check_passes(tmp_path):
    flag = tmp_path / "up"
    result = _lib(f"(sleep 1; touch {flag}) & wait_until no-such.service 'the flag' 10 test -e {flag}; echo done")
    assert result.returncode == 0 and "done" in result.stdout, result.stderr


def test_wait_until_times_out_saying_what_it_awaited():
    result = _lib("wait_until no-such.service 'the moon to answer' 2 false")
    assert result.returncode == 1
    assert "timed out after 2 s waiting for the moon to answer" in result.stderr


def _samples(out: Path) -> Path:
    script = FILES / "usr/local/lib/desktop-env/data/make_samples.py"
    subprocess.run([sys.executable, str(script), str(out)], check=True)
    return out


def test_sample_data_is_deterministic(tmp_path):
    one, two = _samples(tmp_path / "one"), _samples(tmp_path / "two")
    for rel in ["postgres_analytics.sql", "mariadb_hr.sql", "csv/raw_orders.csv"]:
        assert (one / rel).read_bytes() == (two / rel).read_bytes(), rel


@pytest.mark.parametrize("sql,counts", [
    ("postgres_analytics.sql", {"customers": 200, "products": 40, "orders": 1200}),
    ("mariadb_hr.sql", {"departments": 7, "employees": 120}),
])
def test_sample_sql_loads_with_intact_foreign_keys(tmp_path, sql, counts):
    out = _samples(tmp_path / "s")
    con = sqlite3.connect(":memory:")
    con.execute("PRAGMA foreign_keys = ON")
    con.executescript((out / sql).read_text())
    for table, n in counts.items():
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == n
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []


def test_pruning_keeps_the_parent_layer_of_a_derived_image(tmp_path):
    import json

    from desktop_env.image.store import ImageInfo, layers_dir, prune_superseded

    image_dir = tmp_path / "images" / "data-1234"
    image_dir.mkdir(parents=True)
    (image_dir / "metadata.json").write_text(json.dumps({
        "name": "data-1234", "profile": "data", "ready": True, "package_hash": "child", "screen": "1920x1080",
        "auth": True, "created": "2026-01-01T00:00:00"}))
    for name, parent in [("child", "parent"), ("parent", None), ("orphan", None)]:
        layer = layers_dir(tmp_path) / name
        layer.mkdir(parents=True)
        (layer / "layer.json").write_text(json.dumps({"hash": name, **({"parent": parent} if parent else {})}))
    removed = prune_superseded(ImageInfo.load(image_dir), tmp_path)
    assert removed == ["layer orphan"]
    assert sorted(p.name for p in layers_dir(tmp_path).iterdir()) == ["child", "parent"]
