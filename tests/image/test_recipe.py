"""Recipes, hashes, mirrors and the image store, without building anything."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.errors import DesktopEnvError, ImageBuildError, ImageNotFound
from desktop_env.image.builder import host_mirror
from desktop_env.image.recipe import Recipe, parse_screen
from desktop_env.image.store import export_image, find_image, import_image, list_images, resolve_image
from desktop_env.paths import repo_root
from desktop_env.machine import MACHINE_ABI


def test_base_profile_loads_with_locked_pins():
    recipe = Recipe.load("base")
    assert "xfce4-session" in recipe.packages and "chromium" in recipe.packages
    assert {v.name for v in recipe.venvs} == {"server", "jupyter"}
    pins = recipe.locked_pins()
    assert pins is not None, "base.lock.json is stale: run `desktop-env image lock --profile base`"
    assert any(p["name"] == "pyautogui" for p in pins["server"])
    assert any(p["name"] == "jupyterlab" for p in pins["jupyter"])


def test_unknown_profile_lists_known_ones():
    with pytest.raises(ImageBuildError) as err:
        Recipe.load("bsae")
    assert "base" in str(err.value) and "bsae" in str(err.value)


@pytest.mark.parametrize("text,expected", [("1920x1080", (1920, 1080)), ("1280x800", (1280, 800))])
def test_parse_screen(text, expected):
    assert parse_screen(text) == expected


@pytest.mark.parametrize("bad", ["1920", "1920x", "axb", "100x100", "99999x1080"])
def test_parse_screen_rejects(bad):
    with pytest.raises(ValueError):
        parse_screen(bad)


def test_vm_server_change_only_changes_assembly_hash():
    recipe = Recipe.load("base")
    pkg = recipe.package_hash("http://mirror.example/debian")
    asm = recipe.assembly_hash(pkg, "1920x1080", True, MACHINE_ABI)
    probe = repo_root() / "vm_server" / "_hash_probe.txt"
    try:
        probe.write_text("changed")
        assert recipe.package_hash("http://mirror.example/debian") == pkg
        assert recipe.assembly_hash(pkg, "1920x1080", True, MACHINE_ABI) != asm
    finally:
        probe.unlink()
    assert recipe.assembly_hash(pkg, "1920x1080", True, MACHINE_ABI) == asm


def test_hash_inputs_screen_auth_and_mirror():
    recipe = Recipe.load("base")
    pkg = recipe.package_hash("http://a/debian")
    assert recipe.package_hash("http://b/debian") != pkg
    base = recipe.assembly_hash(pkg, "1920x1080", True, MACHINE_ABI)
    assert recipe.assembly_hash(pkg, "1280x800", True, MACHINE_ABI) != base
    assert recipe.assembly_hash(pkg, "1920x1080", False, MACHINE_ABI) != base


def test_extends_merges_packages(tmp_path):
    (tmp_path / "parent.toml").write_text(
        '[profile]\nkernel_cmdline = "root=/dev/vda"\n[debian]\npackages = ["a", "b"]\n'
        '[assembly]\nfiles = "p/files"\n')
    (tmp_path / "child.toml").write_text(
        '[profile]\nextends = "parent"\nmemory_mb = 8192\n[debian]\npackages = ["c"]\n'
        '[assembly]\nscript = "c/run.sh"\n')
    recipe = Recipe.load("child", tmp_path)
    assert recipe.packages == ["a", "b", "c"]
    assert recipe.memory_mb == 8192
    assert recipe.parents == ["parent"]
    assert [p.name for p in recipe.assembly_files] == ["files"]
    assert [p.name for p in recipe.assembly_scripts] == ["run.sh"]


def test_host_mirror_reads_deb822_and_one_line_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n")
    assert host_mirror("bookworm", tmp_path) == "http://mirror.example/debian"
    other = tmp_path / "other"
    other.mkdir()
    (other / "sources.list").write_text("deb [arch=amd64] http://one.example/debian/ bookworm main\n")
    assert host_mirror("bookworm", other) == "http://one.example/debian"
    assert host_mirror("bookworm", tmp_path / "none") == "http://deb.debian.org/debian"


def _fake_image(cache: Path, name="base-0123456789abcdef", ready=True) -> Path:
    folder = cache / "images" / name
    folder.mkdir(parents=True)
    for fname, size in (("disk.qcow2", 4096), ("vmlinuz", 100), ("initrd.img", 100), ("init_state.bin", 2048)):
        (folder / fname).write_bytes(os.urandom(size))
    meta = {"name": name, "profile": "base", "ready": ready, "created": "2026-01-01T00:00:00",
            "screen": "1920x1080", "auth": True, "token": "t", "assembly_hash": name.split("-")[1],
            "files": {"disk": "disk.qcow2", "kernel": "vmlinuz", "initrd": "initrd.img", "state": "init_state.bin"}}
    (folder / "metadata.json").write_text(json.dumps(meta))
    return folder


def test_a_profile_name_picks_this_checkouts_image_before_a_newer_one(tmp_path, caplog):
    from desktop_env.image.current import current_image_name, resolve

    current = current_image_name("base", tmp_path)
    assert current and current.startswith("base-")
    older = _fake_image(tmp_path, current)
    newer = _fake_image(tmp_path, "base-0123456789abcdef")  # built later, say from another checkout
    meta = json.loads((newer / "metadata.json").read_text())
    (newer / "metadata.json").write_text(json.dumps({**meta, "created": "2026-06-01T00:00:00"}))
    assert list_images(tmp_path)[0].name == "base-0123456789abcdef"
    assert resolve_image("base", tmp_path).name == "base-0123456789abcdef", "the store alone: the newest"
    assert resolve("base", tmp_path).name == current
    assert resolve("base-0123456789abcdef", tmp_path).name == "base-0123456789abcdef", "a name is exact"
    shutil.rmtree(older)
    with caplog.at_level("WARNING"):
        assert resolve("base", tmp_path).name == "base-0123456789abcdef"
    assert f"image {current} of this checkout's base recipe is not built" in caplog.text
    assert "desktop-env image build --profile base" in caplog.text


def test_store_lists_only_ready_images(tmp_path):
    _fake_image(tmp_path)
    _fake_image(tmp_path, "base-ffffffffffffffff", ready=False)
    (tmp_path / "images" / "base-aaaa.partial").mkdir()
    assert [i.name for i in list_images(tmp_path)] == ["base-0123456789abcdef"]
    assert find_image("base", tmp_path, assembly_hash="0123456789abcdef") is not None
    assert find_image("base", tmp_path, assembly_hash="nope") is None
    with pytest.raises(ImageNotFound) as err:
        resolve_image("data", tmp_path)
    assert "desktop-env image build --profile data" in str(err.value)


def test_export_import_round_trip_and_checksum(tmp_path):
    src = _fake_image(tmp_path / "a")
    with open(src / "init_state.ram", "wb") as ram:  # a mapped state's RAM: 256 MiB, one page written
        ram.truncate(256 << 20)
        ram.seek(100 << 20)
        ram.write(b"page" * 1024)
    archive = export_image("base", tmp_path / "base.tar", tmp_path / "a")
    assert (tmp_path / "base.tar.sha256").exists()
    assert archive.stat().st_size < 16 << 20, "the RAM file's holes are not written out"
    image = import_image(archive, tmp_path / "b")
    for f in src.iterdir():
        assert (image.path / f.name).read_bytes() == f.read_bytes()
    ram = (image.path / "init_state.ram").stat()
    assert ram.st_size == 256 << 20 and ram.st_blocks * 512 < 1 << 20, "imported sparse again"
    # A corrupted archive is refused.
    data = bytearray(archive.read_bytes())
    data[600] ^= 0xFF
    archive.write_bytes(bytes(data))
    with pytest.raises(DesktopEnvError, match="checksum mismatch"):
        import_image(archive, tmp_path / "c")
    assert not (tmp_path / "c" / "images" / image.name).exists()


def test_cli_image_list_on_empty_cache(tmp_path):
    out = subprocess.run([sys.executable, "-m", "desktop_env", "image", "list", "--cache-dir", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0
    assert "desktop-env image build --profile base" in out.stdout


def test_cli_build_unknown_profile_is_a_clear_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "desktop_env", "image", "build", "--profile", "nope",
                          "--cache-dir", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "unknown profile 'nope'" in out.stderr and "known profiles: base" in out.stderr


def test_prune_superseded_keeps_other_screens_and_used_layers(tmp_path):
    from desktop_env.image.store import ImageInfo, prune_superseded

    old = _fake_image(tmp_path, "base-1111111111111111")
    new = _fake_image(tmp_path, "base-2222222222222222")
    other = _fake_image(tmp_path, "base-3333333333333333")
    for folder, created, screen, layer in ((old, "2026-01-01", "1920x1080", "aaaa"),
                                           (new, "2026-02-01", "1920x1080", "bbbb"),
                                           (other, "2025-01-01", "1280x800", "cccc")):
        meta = json.loads((folder / "metadata.json").read_text())
        meta.update(created=created, screen=screen, package_hash=layer)
        (folder / "metadata.json").write_text(json.dumps(meta))
    for layer in ("aaaa", "bbbb", "cccc", "dddd"):
        (tmp_path / "layers" / layer).mkdir(parents=True)
    removed = prune_superseded(ImageInfo.load(new), tmp_path)
    assert sorted(removed) == ["base-1111111111111111", "layer aaaa", "layer dddd"]
    assert new.exists() and other.exists() and not old.exists()
    assert sorted(p.name for p in (tmp_path / "layers").iterdir()) == ["bbbb", "cccc"]
