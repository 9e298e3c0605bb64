"""Sweeps and plans as Ray tasks on a local Ray: the same answers."""

import os

import pytest

import throughput_lab as tl
from executors import InThisThread

if os.environ.get("TLAB_REQUIRE_ALL"):
    import ray  # noqa: F401  (cargo xtask test installs it: a missing Ray fails)
else:
    ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_a_sweep_and_a_plan_on_ray_are_the_local_ones(local_ray, small):
    from throughput_lab import ray as tl_ray

    _, s = small
    vary = ["arrival.rate=2:20:2", "gpu=h100,l40s"]
    serial = tl.sweep(s, vary, executor=InThisThread(), progress=False)
    # Point for point, one task a point and cut into tasks.
    assert len(serial) == 20
    assert tl_ray.sweep(s, vary, progress=False, chunk=1).equals(serial)
    assert tl_ray.sweep(s, vary, progress=False).equals(serial)
    opts = dict(gpus=["h100", "l40s"], max_replicas=8)
    assert tl_ray.plan(s, progress=False, **opts).json == tl.plan(s, **opts).json
