"""Throughput Lab from Python, timed: what the Python layer and each executor
add to the simulator's own time. Prints a Markdown table for
docs/benchmarks.md.

    target/python-venv/bin/python python/benchmarks/bench.py

Each figure is the median of 25 repeats for one run, 3 to 5 for the rest
(wall time, after one warm-up); the 1,000-point Ray sweeps three times each,
each on a fresh local Ray.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import throughput_lab as tl
from throughput_lab import _native


def median_s(f, repeats: int = 5) -> float:
    f()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cli_run_s(tlab: str, path: str) -> float:
    """`tlab run FILE --json` as a process, wall time (median of 5)."""
    return median_s(lambda: subprocess.run([tlab, "run", path, "--json"], check=True,
                                           capture_output=True))


def ray_sweep_s(s: dict, vary: str, cpus: int) -> float:
    import ray

    from throughput_lab.ray import RayExecutor

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    try:
        ex = RayExecutor()
        t = time.perf_counter()
        tl.sweep(s, vary, executor=ex, progress=False)
        return time.perf_counter() - t
    finally:
        ray.shutdown()


def main() -> None:
    import os
    import tempfile

    rows = []
    s = tl.scenario("chatbot-h100")
    text = json.dumps(s)
    resolved, _ = _native.scenario(text, "json", [])
    native = median_s(lambda: _native.run(resolved), 25)
    python = median_s(lambda: tl.run(s), 25)
    read = median_s(lambda: tl.run(s).overall.ttft.p99_ms, 25)
    rows.append(("one run of chatbot-h100 (the default preset), the native call alone", native))
    rows.append(("the same, `tl.run(dict)`: the scenario checked, the report object", python))
    rows.append(("the same, and a figure read from it (the report parsed)", read))
    tlab = os.environ.get("TLAB_BIN", "target/release/tlab")
    if os.path.exists(tlab):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
        rows.append((f"the same, `tlab run FILE --json` as a process ({tlab})", cli_run_s(tlab, f.name)))
    # The Python layer's own work, timed alone (wall times of whole runs
    # jitter by more than it costs on a shared machine): the scenario
    # resolved and checked, and the report's JSON parsed.
    report_text = _native.run(resolved)
    resolve = median_s(lambda: tl.scenario(s), 25)
    parse = median_s(lambda: json.loads(report_text), 25)
    rows.append(("the Python layer's own work: the scenario resolved and checked", resolve))
    rows.append(("the Python layer's own work: the report's JSON parsed (on first read)", parse))
    print(f"Python overhead per run: {resolve / native * 100:.1f} % of the run"
          f" ({(resolve + parse) / native * 100:.1f} % with the report read)", file=sys.stderr)
    vary = ["arrival.rate=2:40:2", "gpu=h100,l40s"]  # 40 points
    rows.append(("sweep of 40 points, native threads (`_native.sweep`)",
                 median_s(lambda: _native.sweep(resolved, vary), 3)))
    rows.append(("sweep of 40 points, local process pool (default)",
                 median_s(lambda: tl.sweep(s, vary, progress=False), 3)))
    with ThreadPoolExecutor(2) as ex:
        rows.append(("sweep of 40 points, thread pool of 2",
                     median_s(lambda: tl.sweep(s, vary, executor=ex, progress=False), 3)))
    opts = dict(gpus=["h100", "l40s", "a100"], max_replicas=16)
    rows.append(("plan (3 GPUs, ≤ 16 replicas), this machine's cores",
                 median_s(lambda: tl.plan(s, **opts), 3)))
    with ThreadPoolExecutor(2) as ex:
        rows.append(("the same plan, each planning run a task on a thread pool of 2",
                     median_s(lambda: tl.plan(s, executor=ex, progress=False, **opts), 3)))
    try:
        import ray

        from throughput_lab.ray import RayExecutor

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        ex = RayExecutor()
        rows.append(("sweep of 40 points, Ray tasks on a local Ray (2 CPUs)",
                     median_s(lambda: tl.sweep(s, vary, executor=ex, progress=False), 3)))
        rows.append(("the same plan, each planning run a Ray task",
                     median_s(lambda: tl.plan(s, executor=ex, progress=False, **opts), 3)))
        vary1000 = "arrival.rate=2:11.99:0.01"  # 1,000 points
        ray.shutdown()
        one = statistics.median(ray_sweep_s(s, vary1000, 1) for _ in range(3))
        two = statistics.median(ray_sweep_s(s, vary1000, 2) for _ in range(3))
        rows.append(("1,000-point sweep, Ray tasks, local Ray with 1 CPU", one))
        rows.append(("1,000-point sweep, Ray tasks, local Ray with 2 CPUs", two))
        print(f"Ray scaling 1 → 2 workers: {one / two:.2f}×", file=sys.stderr)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        noop = ray.remote(lambda: None)
        n = 200
        per_task = median_s(lambda: ray.get([noop.remote() for _ in range(n)]), 3) / n
        rows.append(("one empty Ray task (scheduling overhead), per task", per_task))
        ray.shutdown()
    except ImportError:
        print("(Ray not installed: its rows left out)", file=sys.stderr)
    cpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    print(f"| what (Python {sys.version.split()[0]}, {cpu} cores) | median |")
    print("|---|---:|")
    for what, secs in rows:
        shown = f"{secs * 1000:.1f} ms" if secs < 1 else f"{secs:.2f} s"
        print(f"| {what} | {shown} |")


if __name__ == "__main__":
    main()
