"""A local Ray cluster for this folder's tests: a head (2 environment slots) and one worker node (1 slot), each a
separate ``ray start`` on loopback with its own scratch folder. A module's tests share one, stopped after them (no Ray
process idles through the rest of the session), with a check that none of its processes (raylets, actors, VMs) is
left."""
import pytest

ray = pytest.importorskip("ray", reason="needs the ray extra: pip install -e '.[ray]'")


@pytest.fixture(scope="module")
def cluster(request):
    if not request.config.getoption("--full"):
        pytest.skip("needs --full (boots VMs on a local Ray cluster)")
    from desktop_env.distributed.local import LocalCluster
    from desktop_env.image.builder import ensure_image

    ensure_image("base")  # on a clean machine this folder's tests come before any other that builds it
    local = LocalCluster(head_slots=2, worker_slots=(1,), cpus=1, object_store_mb=256).start()
    try:
        yield local
    finally:
        left = local.stop(grace_s=10)
    assert not left, f"processes of the local Ray cluster still running after it stopped: {left}"
