"""Throughput Lab from Python, timed: what the Python layer and each executor
add to the simulator's own time. Prints a Markdown table for
docs/benchmarks.md.

    target/python-venv/bin/python python/bench.py

Each figure is the median of 5 repeats (wall time, after one warm-up).
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


def main() -> None:
    rows = []
    s = tl.scenario("chatbot-h100")
    text = json.dumps(s)
    resolved, _ = _native.scenario(text, "json", [])
    rows.append(("one run of chatbot-h100, native call only", median_s(lambda: _native.run(resolved))))
    rows.append(("one run of chatbot-h100, `tl.run(dict)` (checks, report object)",
                 median_s(lambda: tl.run(s))))
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
