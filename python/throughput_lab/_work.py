"""Work sent to executors: top-level functions (picklable by name, so a
process pool or Ray can run them anywhere the package is installed), and
the loops that hand it out and collect it with a progress bar."""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _native
from ._native import ThroughputLabError

#: Most tasks a driver waits on at once; a plan has one per group of
#: searches, a sweep one per point. Bounds the loops below.
MAX_TASKS = 1_000_000


#: Most tasks a sweep is cut into by default: each task carries several
#: points, so a task's cost on the executor (about a millisecond on Ray, a
#: pickle on a process pool) is spread over them, and the tasks still
#: outnumber any one machine's cores for balance.
SWEEP_TASKS = 64


def sweep_point(scenario: str) -> str:
    """One sweep point: its summary, JSON."""
    return _native.sweep_point(scenario)


def sweep_chunk(scenarios: List[str]) -> List[str]:
    """Several sweep points, one after another: their summaries, JSON."""
    return [_native.sweep_point(s) for s in scenarios]


def iter_sweep(
    executor: Optional[Executor], scenarios: List[str], progress: Optional[bool],
    chunk: Optional[int],
) -> Iterator[Tuple[int, str]]:
    """``(i, summary)`` for each sweep point as its task finishes, the points
    cut into tasks of ``chunk`` (by default at most :data:`SWEEP_TASKS` tasks)."""
    n = len(scenarios)
    if chunk is None:
        chunk = max(1, -(-n // SWEEP_TASKS))
    if not isinstance(chunk, int) or chunk < 1:
        raise ThroughputLabError(f"chunk: points per task, a whole number ≥ 1, got {chunk!r}")
    starts = list(range(0, n, chunk))
    tasks = [(scenarios[a:a + chunk],) for a in starts]
    sizes = [len(t[0]) for t in tasks]
    for k, summaries in iter_completed(executor, sweep_chunk, tasks, progress, "points", sizes):
        for j, summary in enumerate(summaries):
            yield starts[k] + j, summary


def planning_run(scenario: str, slo: str) -> str:
    """One planning run: its report, JSON."""
    return _native.planning_run(scenario, slo)


def run_report(scenario: str) -> str:
    """One whole run: its report, JSON."""
    return _native.run(scenario)


def _bar(total: Optional[int], progress: Optional[bool], unit: str):
    """A tqdm bar (a widget in notebooks), or None. By default shown for
    more than 8 tasks, as the CLI shows its bar."""
    if progress is False or (progress is None and total is not None and total <= 8):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=f" {unit}", leave=False)


def _local_pool() -> Executor:
    """A process pool of every core. Spawned, not forked: a fork would copy a
    parent whose native threads may hold locks."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn")
    )


def iter_completed(
    executor: Optional[Executor],
    fn: Callable[..., Any],
    args: Sequence[tuple],
    progress: Optional[bool],
    unit: str,
    sizes: Optional[Sequence[int]] = None,
) -> Iterator[Tuple[int, Any]]:
    """``(i, fn(*args[i]))`` for each of ``args``, run on ``executor`` (a
    local process pool when None), yielded as each finishes. The bar counts
    ``sizes[i]`` for task ``i`` (one each by default)."""
    if len(args) > MAX_TASKS:
        raise ThroughputLabError(f"{len(args)} tasks: at most {MAX_TASKS}")
    sizes = list(sizes) if sizes is not None else [1] * len(args)
    owned = executor is None
    ex = _local_pool() if owned else executor
    bar = _bar(sum(sizes), progress, unit)
    futures: List[Future] = []
    try:
        futures = [ex.submit(fn, *a) for a in args]
        index = {f: i for i, f in enumerate(futures)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=index.__getitem__):
                if bar is not None:
                    bar.update(sizes[index[f]])
                yield index[f], f.result()
    finally:
        for f in futures:
            f.cancel()
        if bar is not None:
            bar.close()
        if owned:
            ex.shutdown(cancel_futures=True)


def map_ordered(
    executor: Optional[Executor],
    fn: Callable[..., Any],
    args: Sequence[tuple],
    progress: Optional[bool],
    unit: str,
) -> List[Any]:
    """``fn(*a)`` for each of ``args`` on ``executor``, results in the order
    of ``args`` whatever order they finish in."""
    out: List[Any] = [None] * len(args)
    for i, r in iter_completed(executor, fn, args, progress, unit):
        out[i] = r
    return out


def plan_on(executor: Executor, planner: "_native.Planner", progress: Optional[bool]):
    """Drive a native ``Planner`` on ``executor``: every run that can start is
    submitted at once; each report is fed back as it lands."""
    from .report import Plan

    slo = planner.slo
    as_is = executor.submit(run_report, planner.as_is)
    out: Dict[Future, int] = {}
    bar = _bar(None, progress, "runs")
    try:
        for _ in range(MAX_TASKS):
            for group, scenario in planner.ready():
                out[executor.submit(planning_run, scenario, slo)] = group
            if not out:
                break
            done, _ = wait(list(out), return_when=FIRST_COMPLETED)
            for f in done:
                group = out.pop(f)
                try:
                    report = f.result()
                except ThroughputLabError as e:
                    planner.refuse(group, str(e))
                else:
                    planner.feed(group, report)
                if bar is not None:
                    bar.update(1)
        answer = planner.finish(as_is.result())
    finally:
        for f in out:
            f.cancel()
        if bar is not None:
            bar.close()
    return Plan(answer, planner.notes)


__all__ = [
    "sweep_point", "sweep_chunk", "iter_sweep", "planning_run", "run_report",
    "iter_completed", "map_ordered", "plan_on",
]
