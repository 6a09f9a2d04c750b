"""The parts of the Ray layer that need no cluster: how a job's files land in the driver's folder, the pool's task
source, which nodes a new actor avoids, and run.py's checks of --ray."""
import queue
import socket

import pytest

from desktop_env.distributed.pool import NODE_ID_LABEL, _TaskSource, portable, task_id_of, unreachable_nodes
from desktop_env.harness.ray_jobs import write_files
from desktop_env.harness.config import RunConfig, RunConfigError


def test_a_jobs_files_replace_the_folder_and_the_status_comes_last(tmp_path, monkeypatch):
    folder = tmp_path / "os" / "t1"
    folder.mkdir(parents=True)
    (folder / "step_1_old.png").write_bytes(b"stale")
    order = []
    import desktop_env.harness.ray_jobs as runs

    real_replace = runs.os.replace
    monkeypatch.setattr(runs.os, "replace", lambda src, dst: (order.append(dst.name), real_replace(src, dst)))
    write_files(folder, {"status.json": b"{}", "traj.jsonl": b"{}\n", "result.txt": b"1.0\n", "step_1_x.png": b"png"})
    assert sorted(p.name for p in folder.iterdir()) == ["result.txt", "status.json", "step_1_x.png", "traj.jsonl"]
    assert order[-2:] == ["result.txt", "status.json"], order
    assert (folder / "result.txt").read_text() == "1.0\n"


def test_a_file_outside_the_jobs_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="outside its folder"):
        write_files(tmp_path / "job", {"../escape.txt": b"x"})
    assert not (tmp_path / "escape.txt").exists()


class _Cluster:
    """What unreachable_nodes reads of Ray: ``ray.nodes()``."""

    def __init__(self, nodes):
        self._nodes = nodes

    def nodes(self):
        return self._nodes


def _node(node_id, port, alive=True, labelled=True):
    return {"NodeID": node_id, "Alive": alive, "NodeManagerAddress": "127.0.0.1", "NodeManagerPort": port,
            "Labels": {NODE_ID_LABEL: node_id} if labelled else {}}


@pytest.fixture
def ports():
    """A port a server listens on (a live raylet's) and one nothing listens on (a killed raylet's)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    yield server.getsockname()[1], dead_port
    server.close()


def test_a_node_whose_raylet_refuses_connections_is_avoided(ports):
    live, dead = ports
    cluster = _Cluster([_node("head", live), _node("worker", dead), _node("gone", dead, alive=False)])
    assert unreachable_nodes(cluster) == {"worker"}  # "gone": the cluster knows, it places nothing there


def test_nodes_are_not_avoided_when_none_answers_or_they_lack_the_label(ports):
    live, dead = ports
    assert unreachable_nodes(_Cluster([_node("a", dead), _node("b", dead)])) == set()  # a driver that reaches none
    assert unreachable_nodes(_Cluster([_node("a", live, labelled=False), _node("b", dead, labelled=False)])) == set()


def test_the_task_source_gives_retries_first_then_the_callers_queue():
    q = queue.Queue()
    source = _TaskSource(q)
    assert source.next() is None  # an empty queue leaves the environment idle
    q.put("a.json")
    q.put("b.json")
    source.retry.append(("x.json", 2))
    assert [source.next(), source.next(), source.next(), source.next()] == [("x.json", 2), ("a.json", 1),
                                                                           ("b.json", 1), None]
    listed = _TaskSource(["c.json"])
    assert listed.next() == ("c.json", 1) and listed.next() is None and listed.next() is None


def test_task_ids_and_paths_sent_to_nodes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert portable("examples/os/t/t.json") == str(tmp_path / "examples/os/t/t.json")
    assert portable({"id": "t"}) == {"id": "t"}
    assert task_id_of("examples/os/t-1/t-1.json") == "t-1" and task_id_of({"id": "t-2"}) == "t-2"


@pytest.mark.parametrize("settings,message", [
    (dict(ray="auto", hosts="qemu+ssh://h/system"), "give one"),
    (dict(ray="auto", model="human"), "drop --ray"),
])
def test_ray_settings_that_cannot_work_are_refused(settings, message):
    with pytest.raises(RunConfigError, match=message):
        RunConfig(**settings)


def test_image_fit_gives_a_nodes_slots_as_ray_resources(tmp_path):
    import json
    import subprocess
    import sys

    from desktop_env.errors import DesktopEnvError
    from desktop_env.image.capacity import capacity
    from desktop_env.image.current import resolve

    try:
        image = resolve("base")
    except DesktopEnvError:
        pytest.skip("no base image in the cache (desktop-env image build --profile base)")
    done = subprocess.run([sys.executable, "-m", "desktop_env", "image", "fit", "--path_to_vm", image.name,
                           "--ray_resources"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    slots = json.loads(done.stdout)["desktop_env_slot"]
    assert abs(slots - capacity(image).fits) <= 1  # free memory moves a little between the two readings


def _image(cache, name="base-0123456789abcdef", token="tok-a", created="2026-12-06T08:00:00+0000"):
    import json

    folder = cache / "images" / name
    folder.mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps({"name": name, "profile": name.split("-")[0], "ready": True,
                                                      "created": created, "token": token, "files": {}}))
    from desktop_env.image.store import ImageInfo

    return ImageInfo.load(folder)


def test_a_node_with_the_drivers_build_of_the_image_passes(tmp_path):
    from desktop_env.distributed.images import check_node_image, driver_image

    image = _image(tmp_path)
    identity = driver_image(image.name, tmp_path)
    assert identity.name == image.name and identity.build == image.build_id
    check_node_image(identity, tmp_path)
    check_node_image(None, tmp_path)  # nothing to check against
    disk = tmp_path / "other-suite.qcow2"
    disk.write_bytes(b"QFI")
    assert driver_image(str(disk), tmp_path) is None  # another suite's disk: each node prepares its own


def test_a_node_without_the_image_or_with_a_rebuild_of_it_is_refused(tmp_path):
    from desktop_env.distributed.images import NodeImageError, check_node_image, driver_image

    driver_cache, node_cache = tmp_path / "driver", tmp_path / "node"
    identity = driver_image(_image(driver_cache).name, driver_cache)
    with pytest.raises(NodeImageError) as missing:
        check_node_image(identity, node_cache)
    assert "has no image base-0123456789abcdef" in str(missing.value)
    assert "desktop-env image export base-0123456789abcdef" in str(missing.value)
    assert "desktop-env image import base-0123456789abcdef.tar" in str(missing.value)
    rebuilt = _image(node_cache, token="tok-b", created="2026-12-06T09:00:00+0000")  # the same recipe built again
    assert rebuilt.name == identity.name and rebuilt.build_id != identity.build
    with pytest.raises(NodeImageError, match=f"another build of base-0123456789abcdef \\(build {rebuilt.build_id}"):
        check_node_image(identity, node_cache)
