"""A full filesystem under the results or the image cache: a clear error, nothing half-done counted as done."""
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from desktop_env.errors import ImageBuildError
from faultutil import DATA, QUICK_TASK, ROOT, PortWatcher, leftovers, root_only, write_index

pytestmark = [pytest.mark.vm, pytest.mark.slow, root_only]


@contextmanager
def tmpfs(path: Path, size: str):
    """A tmpfs of ``size`` mounted at ``path`` for the duration of the block."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _run(results: Path, index: Path, image: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "run.py", "--model", "oracle", "--path_to_vm", image,
                           "--test_all_meta_path", str(index), "--test_config_base_dir", str(DATA),
                           "--result_dir", str(results)], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_full_results_filesystem(base_image, private_runtime, tmp_path):
    index = write_index(tmp_path, QUICK_TASK)
    with tmpfs(tmp_path / "results", "64k") as results:
        with PortWatcher(private_runtime) as watcher:
            out = _run(results, index, base_image.name)
        text = out.stdout + out.stderr
        assert out.returncode != 0, text
        assert "No space left on device" in text, text[-3000:]
        folder = results / "pyautogui" / "screenshot" / "oracle" / "faults" / QUICK_TASK
        result = folder / "result.txt"
        assert not result.exists() or not result.read_text().strip(), "a failed write must not count as done"
        assert leftovers(private_runtime, watcher.ports) == []
        # Space comes back: the rerun completes the task it could not record.
        subprocess.run(["mount", "-o", "remount,size=256m", str(results)], check=True)
        with PortWatcher(private_runtime) as watcher:
            out = _run(results, index, base_image.name)
        assert out.returncode == 0, out.stdout + out.stderr
        assert float(result.read_text()) == 1.0
    assert leftovers(private_runtime, watcher.ports) == []


def test_full_cache_during_image_build(tmp_path):
    """The build's assembly runs out of space: the build fails clearly and no image is marked ready.

    The package layer (GiBs) is shared read-only from the default cache through a symlink,
    so the build starts at assembly and fills the small cache in seconds.
    """
    from desktop_env.image.builder import BuildOptions, ImageBuilder
    from desktop_env.image.store import images_dir, layers_dir, list_images

    with tmpfs(tmp_path / "cache", "48m") as cache:
        builder = ImageBuilder(BuildOptions(profile="base", cache_dir=cache))
        pkg_hash, _ = builder.hashes()
        shared_layer = layers_dir(None) / pkg_hash
        if not (shared_layer / "layer.json").exists():
            pytest.skip(f"the shared cache has no package layer {pkg_hash} for the current recipe")
        (cache / "layers").mkdir()
        (cache / "layers" / pkg_hash).symlink_to(shared_layer)
        with pytest.raises((ImageBuildError, OSError)) as err:
            builder.build()
        assert "No space left on device" in str(err.value), err.value
        if isinstance(err.value, ImageBuildError):
            assert err.value.phase in ("assembly", "filesystem")
        assert list_images(cache) == []
        assert [p.name for p in images_dir(cache).iterdir() if not p.name.startswith(".")] == []
        assert (shared_layer / "layer.json").exists(), "the shared layer is untouched"
