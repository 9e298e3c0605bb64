"""Many runs from Python: sweeps and plans on any executor give the CLI's
answers, whatever runs them and in whatever order they finish."""

import io
import json
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest

import throughput_lab as tl
from executors import InThisThread


def test_a_sweep_is_the_same_on_every_executor_and_the_clis(tlab, small):
    path, s = small
    vary = ["arrival.rate=4,8,16", "gpu=h100,l40s"]
    cli = pd.read_csv(io.StringIO(tlab("sweep", str(path), "--vary", vary[0], "--vary", vary[1])))
    serial = tl.sweep(s, vary, executor=InThisThread(), progress=False)
    assert len(serial) == 6
    pd.testing.assert_frame_equal(serial, cli)
    with ThreadPoolExecutor(3) as ex:
        pd.testing.assert_frame_equal(tl.sweep(s, vary, executor=ex, progress=False), cli)
    # The default: a local process pool. And points cut into tasks any way.
    pd.testing.assert_frame_equal(tl.sweep(str(path), vary, progress=False), cli)
    for chunk in (1, 4, 100):
        pd.testing.assert_frame_equal(
            tl.sweep(s, vary, executor=InThisThread(), chunk=chunk, progress=False), cli
        )
    with pytest.raises(tl.ThroughputLabError, match="chunk"):
        tl.sweep(s, vary, executor=InThisThread(), chunk=0, progress=False)
    # More load, more output: the rows are the points they say.
    h100 = serial[serial["gpu"] == "h100"].sort_values("arrival.rate")
    assert h100["output_tokens_per_s"].is_monotonic_increasing


def test_a_sweep_streams_its_rows_as_they_finish(small):
    _, s = small
    vary = "arrival.rate=4,8,16,32"
    table = tl.sweep(s, vary, executor=InThisThread(), progress=False)
    with ThreadPoolExecutor(2) as ex:
        rows = list(tl.sweep_iter(s, vary, executor=ex, chunk=1, progress=False))
    assert sorted(r["point"] for r in rows) == [0, 1, 2, 3]
    for r in rows:
        expected = table.iloc[r["point"]]
        assert float(r["arrival.rate"]) == expected["arrival.rate"]
        assert r["output_tokens_per_s"] == expected["output_tokens_per_s"]
        assert r["requests_per_s"] == expected["requests_per_s"]


def test_a_sweep_refuses_a_bad_axis_by_name(small):
    _, s = small
    with pytest.raises(tl.ThroughputLabError, match="vary"):
        tl.sweep(s, "nosuch=1,2", progress=False)
    with pytest.raises(tl.ThroughputLabError, match="one or two axes"):
        tl.sweep(s, ["arrival.rate=1,2"] * 3, progress=False)


def plan_options():
    return dict(gpus=["h100", "l40s"], max_replicas=8)


def test_a_plan_on_an_executor_is_the_plan_on_one_machine(tlab, small):
    path, s = small
    here = tl.plan(s, **plan_options())
    cli = tlab("plan", str(path), "--gpus", "h100,l40s", "--max-replicas", "8", "--json")
    assert here.json == cli
    assert len(here.feasible) > 0
    with ThreadPoolExecutor(4) as ex:
        pooled = tl.plan(s, executor=ex, progress=False, **plan_options())
    assert pooled.json == cli
    assert tl.plan(s, executor=InThisThread(), progress=False, **plan_options()).json == cli
    table = pooled.to_pandas()
    assert list(table["usd_per_month"]) == [f["usd_per_month"] for f in json.loads(cli)["feasible"]]


def test_a_budgeted_plan_is_the_same_on_an_executor(small):
    # The default budget with a load that leaves searches for a later pass.
    _, s = small
    opts = dict(gpus=["h100", "l4", "a100"], max_replicas=16)
    heavy = dict(arrival__rate=40)
    with ThreadPoolExecutor(2) as ex:
        assert tl.plan(s, executor=ex, progress=False, **opts, **heavy).json == tl.plan(
            s, **opts, **heavy
        ).json


def test_pool_and_split_plans_are_the_clis(tlab, root, tmp_path):
    two = tmp_path / "two.json"
    two.write_text(tlab("preset", "two-models"))
    cli = json.loads(tlab("plan", str(two), "--pools", "--json", "--set", "duration=60"))
    here = tl.plan(str(two), pools=True, duration=60)
    assert here.to_dict() == cli
    split = tmp_path / "split.json"
    split.write_text(tlab("preset", "split-prefill-decode"))
    cli = json.loads(tlab("plan", str(split), "--split", "--link", "infiniband", "--json",
                          "--set", "duration=60"))
    assert tl.plan(str(split), split=True, link="infiniband", duration=60).to_dict() == cli
    with pytest.raises(tl.ThroughputLabError, match="link must be"):
        tl.plan(str(split), split=True, link="carrier-pigeon", duration=60)
    with pytest.raises(tl.ThroughputLabError, match="no executor"):
        tl.plan(str(two), pools=True, executor=InThisThread())


def test_plan_targets_are_checked_by_name(small):
    _, s = small
    with pytest.raises(tl.ThroughputLabError, match="max_errors"):
        tl.plan(s, max_errors=2)
    with pytest.raises(tl.ThroughputLabError, match="max_replicas"):
        tl.plan(s, max_replicas=0)
    with pytest.raises(tl.ThroughputLabError, match="gpus: gpu: unknown value"):
        tl.plan(s, gpus=["h1000"])


def test_curve_compare_and_headroom_are_the_clis(tlab, small):
    path, s = small
    assert tl.curve(s, "2,8") == json.loads(tlab("curve", str(path), "--rates", "2,8", "--json"))
    h = tl.headroom(s)
    assert h["verdict"] + "\n" == tlab("headroom", str(path))
    spike = tlab("preset", "launch-spike")
    spike_path = path.parent / "spike.json"
    spike_path.write_text(spike)
    assert tl.compare(str(spike_path), [1, 10]) == json.loads(
        tlab("compare", str(spike_path), "--loads", "1,10", "--json")
    )
    assert tl.compare(str(spike_path), [1], tier="small") == json.loads(
        tlab("compare", str(spike_path), "--loads", "1", "--tier", "small", "--json")
    )
    with pytest.raises(tl.ThroughputLabError) as e:
        tl.compare(str(spike_path), [1], tier="nosuch")
    cli = tlab("compare", str(spike_path), "--tier", "nosuch", ok=False)
    assert str(e.value) == cli.removeprefix("tlab: ").strip() == (
        'no tier "nosuch"; the scenario has: frontier, small'
    )


def test_presets_and_their_scenarios(tlab):
    ids = [p["id"] for p in tl.presets()]
    assert ids == [line.split()[0] for line in tlab("presets").splitlines()]
    assert tl.preset("two-models") == json.loads(tlab("preset", "two-models"))
    with pytest.raises(tl.ThroughputLabError, match="no preset"):
        tl.preset("nosuch")


def test_calibrate_gives_the_clis_rows_as_a_table(tlab, root, tmp_path):
    # One dense experiment of the vLLM runs (its rows), to keep it quick.
    lines = (root / "data/calibration/vllm-h100-runs.csv").read_text().splitlines()
    one = "64-qwen2-5-7b-instruct-tp1-roleplay-1-1"
    keep = [lines[0]] + [l for l in lines[1:] if l.split(",")[0] == one]
    assert len(keep) > 2
    csv = tmp_path / "runs.csv"
    csv.write_text("\n".join(keep) + "\n")
    cli = json.loads(tlab("calibrate", "--json", str(csv)))
    df = tl.calibrate(csv)
    assert len(df) == len(cli["rows"]) == len(keep) - 1
    assert df.attrs["summary"] == cli["summary"]
    measured = [c for c in df.columns if c.startswith("measured.")]
    assert measured, list(df.columns)
    for c in measured:
        key = c.removeprefix("measured.")
        assert list(df[c].fillna(-1)) == [
            r["measured"].get(key, -1) if r["measured"].get(key) is not None else -1
            for r in cli["rows"]
        ]


def test_read_trace_says_what_tlab_trace_says(tlab, root):
    trace = root / "sim-core/tests/traces/mooncake-first-2000.jsonl"
    t = tl.read_trace(trace)
    assert t["requests"] == 2000
    assert len(t["sha256"]) == 64
    assert t["summary"].strip() in tlab("trace", str(trace))
    with pytest.raises(tl.ThroughputLabError):
        tl.read_trace(root / "sim-core/tests/repro/hostile-files/trace-bom-mooncake.jsonl.nosuch")
