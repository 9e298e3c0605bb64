"""Throughput Lab from Python: the same simulator as the page and ``tlab``.

A scenario is a dict, a path to a JSON file, a share link copied from the
page, or a preset's id. Edits are named as ``tlab run --set`` names them:
``run("chatbot-h100", arrival__rate=30)`` (a double underscore stands for
the dot) or ``run(s, set={"share[chat]": 0.5})``. The same scenario gives
the same numbers as the CLI and the page, byte for byte in the JSON.

Every run happens in the native module with the GIL released. Sweeps and
plans take any ``concurrent.futures`` executor (a local process pool by
default for sweeps; ``throughput_lab.ray`` for a Ray cluster).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Executor
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

from . import _native, _work
from ._native import ThroughputLabError
from .report import Plan, Report, Table

__all__ = [
    "ThroughputLabError",
    "Report",
    "Plan",
    "Table",
    "run",
    "ranges",
    "scenario",
    "sweep",
    "sweep_iter",
    "curve",
    "plan",
    "headroom",
    "compare",
    "presets",
    "preset",
    "link",
    "from_link",
    "calibrate",
    "read_trace",
    "distil",
    "apply",
]

__version__ = _native.__version__

ScenarioLike = Union[Mapping[str, Any], str, "os.PathLike[str]"]


def _value(v: Any) -> str:
    """A Python value as ``--set`` reads it."""
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (list, tuple)):
        return ",".join(_value(x) for x in v)
    return str(v)


def _edits(set: Optional[Mapping[str, Any]], edits: Mapping[str, Any]) -> list:
    out = [f"{k}={_value(v)}" for k, v in (set or {}).items()]
    out += [f"{k.replace('__', '.')}={_value(v)}" for k, v in edits.items()]
    return out


def _source(s: ScenarioLike) -> tuple:
    """(text, kind) for the native module: what ``s`` stands for."""
    if isinstance(s, Mapping):
        return json.dumps(s), "json"
    if isinstance(s, os.PathLike):
        return os.fspath(s), "path"
    if not isinstance(s, str):
        raise TypeError(
            f"a scenario is a dict, a path, a share link or a preset id, not {type(s).__name__}"
        )
    if "#s=" in s:
        return s, "link"
    if s.lstrip().startswith("{"):
        return s, "json"
    if os.path.exists(s) or s == "-":
        return s, "path"
    if s in {p["id"] for p in presets()}:
        return _native.preset(s), "json"
    raise ThroughputLabError(
        f"{s}: no such file, link or preset (presets: {', '.join(p['id'] for p in presets())})"
    )


def _resolve(s: ScenarioLike, set: Optional[Mapping[str, Any]], edits: Mapping[str, Any]) -> str:
    """The scenario as checked JSON text, its edits applied (what else an
    edit changed is warned about, as the CLI says it on standard error)."""
    text, kind = _source(s)
    resolved, notes = _native.scenario(text, kind, _edits(set, edits))
    if notes:
        import warnings

        for n in notes:
            warnings.warn(n, stacklevel=3)
    return resolved


def scenario(s: ScenarioLike, *, set: Optional[Mapping[str, Any]] = None, **edits: Any) -> dict:
    """The scenario ``s`` stands for, edits applied and checked, as a dict."""
    return json.loads(_resolve(s, set, edits))


def run(s: ScenarioLike, *, set: Optional[Mapping[str, Any]] = None, **edits: Any) -> Report:
    """Run a scenario: its report (``tlab run --json``'s, as a typed object)."""
    return Report(_native.run(_resolve(s, set, edits)))


def ranges(s: ScenarioLike, *, set: Optional[Mapping[str, Any]] = None, **edits: Any) -> Report:
    """Run a scenario and its range runs (``tlab run --ranges --json``): the
    report, with ``.ranges`` beside its fields: ``figures`` (each
    ``{value, low, high}`` by the report's name, ``ttft_p99_ms``…),
    ``verdict`` (``stable``, ``near_the_knee``, ``overloaded``), ``runs``,
    ``meeting_targets`` and the step-time ``basis`` the runs used."""
    return Report(_native.ranges(_resolve(s, set, edits)))


def _sweep_points(s: ScenarioLike, vary, set, edits) -> tuple:
    """The axes as a list, and each point's axis values and scenario."""
    vary = [vary] if isinstance(vary, str) else list(vary)
    return vary, _native.sweep_points(_resolve(s, set, edits), vary)


def sweep(
    s: ScenarioLike,
    vary: Union[str, Sequence[str]],
    *,
    executor: Optional[Executor] = None,
    progress: Optional[bool] = None,
    chunk: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    **edits: Any,
):
    """Vary one or two parameters (``"arrival.rate=5:40:5"``, ``"gpu=h100,l40s"``)
    and tabulate the summary metrics, as ``tlab sweep`` writes them: a pandas
    DataFrame, one row per point in order.

    The points run as tasks on ``executor`` (any ``concurrent.futures``
    executor; by default a local process pool of every core), ``chunk``
    points a task (by default the points cut into at most 64 tasks, so a
    task's cost on the executor is spread). Results are identical however
    the points are run.
    """
    import io

    import pandas as pd

    vary, points = _sweep_points(s, vary, set, edits)
    summaries: list = [None] * len(points)
    for i, summary in _work.iter_sweep(executor, [sc for _, sc in points], progress, chunk):
        summaries[i] = summary
    csv = _native.sweep_csv(vary, [(labels, sm) for (labels, _), sm in zip(points, summaries)])
    return pd.read_csv(io.StringIO(csv))


def sweep_iter(
    s: ScenarioLike,
    vary: Union[str, Sequence[str]],
    *,
    executor: Optional[Executor] = None,
    progress: Optional[bool] = None,
    chunk: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    **edits: Any,
) -> Iterator[dict]:
    """:func:`sweep`'s rows as each point finishes (not in order): dicts of
    the axis values (as typed) and the summary, with ``"point"`` its row in
    :func:`sweep`'s table. For long sweeps watched in a notebook."""
    vary, points = _sweep_points(s, vary, set, edits)
    names = [v.split("=", 1)[0] for v in vary]
    for i, summary in _work.iter_sweep(executor, [sc for _, sc in points], progress, chunk):
        yield {"point": i, **dict(zip(names, points[i][0])), **json.loads(summary)}


def curve(
    s: ScenarioLike,
    rates: str = "1:40:3",
    *,
    set: Optional[Mapping[str, Any]] = None,
    **edits: Any,
) -> list:
    """Latency against throughput for every batching policy as the load
    rises (``tlab curve --json``), on this machine's cores."""
    return json.loads(_native.curve(_resolve(s, set, edits), rates))


def _ask(
    ttft_p99_ms, tpot_p99_ms, max_errors, min_goodput, max_replicas=None, gpus=None,
    self_hosted=False, full=False, pools=False, split=False, link=None,
) -> str:
    if isinstance(gpus, str):
        gpus = [gpus]
    ask = {
        "ttft_p99_ms": ttft_p99_ms,
        "tpot_p99_ms": tpot_p99_ms,
        "max_errors": max_errors,
        "min_goodput": min_goodput,
        "max_replicas": max_replicas,
        "gpus": list(gpus or []),
        "self_hosted": bool(self_hosted),
        "full": bool(full),
        "pools": bool(pools),
        "split": bool(split),
        "link": link,
    }
    return json.dumps(ask)


def plan(
    s: ScenarioLike,
    *,
    ttft_p99_ms: Optional[float] = None,
    tpot_p99_ms: Optional[float] = None,
    max_errors: Optional[float] = None,
    min_goodput: Optional[float] = None,
    max_replicas: Optional[int] = None,
    gpus: Optional[Iterable[str]] = None,
    self_hosted: bool = False,
    full: bool = False,
    pools: bool = False,
    split: bool = False,
    link: Optional[str] = None,
    executor: Optional[Executor] = None,
    progress: Optional[bool] = None,
    set: Optional[Mapping[str, Any]] = None,
    **edits: Any,
) -> Plan:
    """The cheapest setups that meet the targets at the scenario's load, as
    ``tlab plan --json`` answers (the options are its flags).

    Without ``executor`` the searches run on this machine's cores. With one,
    every planning run is a task on it (a process pool, a Ray cluster): the
    searches ask for runs and take their reports back in any order, within
    the same work budget per search, so the plan is the same.

    ``pools=True`` plans pools (``tlab plan --pools``), ``split=True`` a
    prefill/decode split over ``link`` (``tlab plan --split``); their
    searches follow one another, so they run here, without an executor.
    """
    text = _resolve(s, set, edits)
    ask = _ask(ttft_p99_ms, tpot_p99_ms, max_errors, min_goodput, max_replicas, gpus,
               self_hosted, full, pools, split, link)
    if executor is None:
        answer, notes = _native.plan(text, ask)
        return Plan(answer, notes)
    return _work.plan_on(executor, _native.Planner(text, ask), progress)


def headroom(
    s: ScenarioLike,
    *,
    ttft_p99_ms: Optional[float] = None,
    tpot_p99_ms: Optional[float] = None,
    max_errors: Optional[float] = None,
    min_goodput: Optional[float] = None,
    set: Optional[Mapping[str, Any]] = None,
    **edits: Any,
) -> dict:
    """How far the load can grow before the targets break (``tlab headroom``):
    the multiplier found, its bounds, and the verdict in words."""
    ask = _ask(ttft_p99_ms, tpot_p99_ms, max_errors, min_goodput)
    return json.loads(_native.headroom(_resolve(s, set, edits), ask))


def compare(
    s: ScenarioLike,
    loads: Sequence[float] = (0.5, 1, 2, 5, 10, 20, 50, 100),
    *,
    tier: Optional[str] = None,
    set: Optional[Mapping[str, Any]] = None,
    **edits: Any,
) -> dict:
    """Monthly cost on an API tier against self-hosting as load grows, and
    the crossover (``tlab compare --json``)."""
    return json.loads(_native.compare(_resolve(s, set, edits), [float(x) for x in loads], tier))


def presets() -> list:
    """The built-in presets: ``[{"id": ..., "title": ...}, ...]``."""
    return [{"id": i, "title": t} for i, t in _native.presets()]


def preset(id: str) -> dict:
    """A preset's scenario, ready to edit and run."""
    return json.loads(_native.preset(id))


def link(s: ScenarioLike, base: str = "", *, set: Optional[Mapping[str, Any]] = None,
         **edits: Any) -> str:
    """A share link for the scenario: ``base`` (the page's address) followed
    by its ``#s=…`` fragment. The page, ``tlab run`` and :func:`run` open it
    with the same numbers."""
    return base + _native.link(_resolve(s, set, edits))


def from_link(url: str) -> dict:
    """The scenario a share link holds."""
    return json.loads(_native.from_link(url))


def calibrate(files: Union[str, "os.PathLike[str]", Sequence[Any]]):
    """Measured runs against the simulator (``tlab calibrate --json``): MLPerf,
    InferenceX or vLLM CSVs, each told by its header. A DataFrame with one
    row per measured row: its keys, then ``measured.<column>`` and
    ``simulated.<column>`` (the CSV's own column names); ``.attrs["summary"]``
    holds the MAPE per source and per GPU × engine × model."""
    import pandas as pd

    if isinstance(files, (str, os.PathLike)):
        files = [files]
    out = json.loads(_native.calibrate([os.fspath(f) for f in files]))
    df = pd.json_normalize(out["rows"])
    df.attrs["summary"] = out["summary"]
    return df


def read_trace(path: Union[str, "os.PathLike[str]"], *, skip_bad_lines: bool = False) -> dict:
    """What a request trace holds (``tlab trace FILE``): its name, SHA-256,
    request count and summary in words."""
    return json.loads(_native.read_trace(os.fspath(path), skip_bad_lines))


def distil(
    path: Union[str, "os.PathLike[str]"], onto: ScenarioLike, *, skip_bad_lines: bool = False
) -> tuple:
    """A trace distilled onto ``onto``'s fleet (``tlab trace FILE --distil``):
    ``(scenario, loses)``, the scenario as a dict (a rate schedule, quantile
    tables of lengths, shared prefixes: small enough for a share link) and
    what the distillation loses, in words."""
    text, loses = _native.distil_trace(os.fspath(path), _resolve(onto, None, {}), skip_bad_lines)
    return json.loads(text), list(loses)


def apply(s: ScenarioLike, setup: Any) -> dict:
    """The scenario with a plan's setup applied, as the page's "Apply" does:
    ``setup`` is a row of ``plan(...).feasible`` (or its dict)."""
    row = setup.to_dict() if hasattr(setup, "to_dict") else setup
    return json.loads(_native.apply_setup(_resolve(s, None, {}), json.dumps(row)))
