"""Reports and plans as Python objects: attribute access over the JSON the
CLI prints (``report.overall.ttft.p99_ms``), the exact JSON text kept
(``report.json``), and pandas tables (``report.to_pandas()``)."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, List, Optional


class Table:
    """A JSON object with its keys as attributes, nested objects and lists
    of objects wrapped alike. ``dir()`` lists the keys, so notebooks
    complete them; ``to_dict()`` gives the plain data back."""

    __slots__ = ("_data",)

    def __init__(self, data: Dict[str, Any]):
        object.__setattr__(self, "_data", data)

    @staticmethod
    def wrap(v: Any) -> Any:
        if isinstance(v, dict):
            return Table(v)
        if isinstance(v, list):
            return [Table.wrap(x) for x in v]
        return v

    def __getattr__(self, name: str) -> Any:
        try:
            return Table.wrap(self._data[name])
        except KeyError:
            raise AttributeError(
                f"no field {name!r}; fields: {', '.join(self._data)}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("reports are read-only")

    def __getitem__(self, key: str) -> Any:
        return Table.wrap(self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> List[str]:
        return list(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and self._data == other._data

    def __repr__(self) -> str:
        keys = ", ".join(list(self._data)[:8])
        more = ", …" if len(self._data) > 8 else ""
        return f"{type(self).__name__}({keys}{more})"

    def to_dict(self) -> Dict[str, Any]:
        """The plain JSON data."""
        return self._data


class Report(Table):
    """One run's report: what ``tlab run --json`` prints, as an object.

    Headline fields: ``complete``, ``sim_time_s``, ``requests`` (arrived,
    completed, rejected, failed, timed out), ``overall`` and ``per_class``
    (latency percentiles in ms: ``ttft``, ``tpot``, ``e2e``, ``queue_wait``;
    ``slo_met_fraction``), ``throughput`` (tokens/s), ``utilisation``,
    ``cost`` (``usd_per_month``, ``usd_per_mtok``…), ``api`` (rate limits,
    retries, caching), ``pools``, ``stages``, ``series`` (time series).
    """

    __slots__ = ("_json",)

    def __init__(self, text: str):
        # Parsed on first use: a sweep of runs that only keeps `.json` never
        # pays for the objects.
        object.__setattr__(self, "_json", text)

    def __getattr__(self, name: str) -> Any:
        if name == "_data":
            data = json.loads(self._json)
            object.__setattr__(self, "_data", data)
            return data
        return super().__getattr__(name)

    @property
    def json(self) -> str:
        """The report's JSON text, byte for byte as ``tlab run --json`` prints it."""
        return self._json

    def to_pandas(self) -> Dict[str, Any]:
        """The report's tables as DataFrames: ``classes`` (one row per class,
        nested figures as ``ttft.p99_ms`` columns), ``pools``, ``stages`` and
        ``series`` (one row per window, ``t_s`` its start)."""
        import pandas as pd

        d = self._data
        series = d.get("series") or {}
        t = series.get("t_s") or []
        columns = {
            k: v for k, v in series.items() if isinstance(v, list) and len(v) == len(t)
        }
        return {
            "classes": pd.json_normalize([d["overall"], *d.get("per_class", [])]),
            "pools": pd.json_normalize(d.get("pools") or []),
            "stages": pd.json_normalize(d.get("stages") or []),
            "series": pd.DataFrame(columns),
        }


class Plan(Table):
    """A plan: what ``tlab plan --json`` prints, as an object (``feasible``
    setups cheapest first, ``near_misses``, ``unsettled``, ``pruned``…), and
    ``notes``: what the question cost said before anything ran."""

    __slots__ = ("_json", "notes")

    def __init__(self, text: str, notes: Optional[List[str]] = None):
        super().__init__(json.loads(text))
        object.__setattr__(self, "_json", text)
        object.__setattr__(self, "notes", list(notes or []))

    @property
    def json(self) -> str:
        """The plan's JSON text, as ``tlab plan --json`` prints it."""
        return self._json

    def to_pandas(self):
        """The feasible setups, cheapest first, one row each (their summary
        figures as ``summary.ttft_p99_ms`` columns)."""
        import pandas as pd

        return pd.json_normalize(self._data.get("feasible") or [])
