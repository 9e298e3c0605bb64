"""Sweeps and plans on Ray: every sweep point and every planning run a Ray
task, on a local Ray by default or on a cluster after
``ray.init(address=...)``. What scales is the number of independent runs
(sweep points, the planner's searches), not one run: a run is one task.

The package must be installed where the tasks run (every node of the
cluster, or a ``runtime_env`` that installs it).
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from typing import Any, Callable, Optional

import throughput_lab


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


class RayExecutor(Executor):
    """A ``concurrent.futures`` executor whose tasks are Ray tasks. Starts a
    local Ray (``ray.init()``) unless one is running or connected."""

    def __init__(self, **init: Any):
        import ray

        if not ray.is_initialized():
            ray.init(**init)
        self._remote = ray.remote(_call)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        if kwargs:
            raise TypeError("Ray tasks here take positional arguments only")
        return self._remote.remote(fn, *args).future()


def sweep(scenario, vary, *, progress: Optional[bool] = None, **options: Any):
    """:func:`throughput_lab.sweep` with each point a Ray task."""
    return throughput_lab.sweep(scenario, vary, executor=RayExecutor(), progress=progress,
                                **options)


def plan(scenario, *, progress: Optional[bool] = None, **options: Any):
    """:func:`throughput_lab.plan` with each planning run a Ray task: the
    same plan as on one machine, given the same budget."""
    return throughput_lab.plan(scenario, executor=RayExecutor(), progress=progress, **options)
