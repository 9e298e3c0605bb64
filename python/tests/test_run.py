"""One run from Python: the CLI's numbers, byte for byte."""

import json
import threading

import pytest

import throughput_lab as tl


@pytest.mark.parametrize("preset", [p["id"] for p in tl.presets()])
def test_every_preset_runs_to_the_clis_report_byte_for_byte(preset, tlab, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(tlab("preset", preset))
    cli = tlab("run", str(path), "--json")
    assert tl.run(str(path)).json == cli
    # The preset by id, a dict and the file are one scenario.
    assert tl.run(preset).json == cli
    assert tl.run(json.loads(path.read_text())).json == cli


def test_edits_are_the_clis_set(tlab, small):
    path, _ = small
    cli = tlab("run", str(path), "--set", "arrival.rate=7", "--set", "prefix_caching=off", "--json")
    assert tl.run(str(path), arrival__rate=7, prefix_caching=False).json == cli
    assert tl.run(str(path), set={"arrival.rate": 7.0, "prefix_caching": "off"}).json == cli
    # The edit happened: a different load gives different numbers.
    assert tl.run(str(path)).json != cli


def test_a_share_link_reopens_with_the_same_numbers(tlab, small):
    path, s = small
    url = tl.link(s, "https://example.org/lab/")
    assert url.startswith("https://example.org/lab/#s=v1.")
    assert tl.from_link(url) == tl.scenario(s)
    assert tl.run(url).json == tlab("run", url, "--json") == tl.run(s).json


def test_refusals_name_the_field_as_the_cli_does(tlab, small, tmp_path):
    path, s = small
    with pytest.raises(tl.ThroughputLabError) as e:
        tl.run(str(path), nosuch=1)
    assert str(e.value) == tlab("run", str(path), "--set", "nosuch=1", ok=False).removeprefix("tlab: ").strip()
    bad = dict(s, workload=dict(s["workload"], classes=[{"rate": -1}]))
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad))
    with pytest.raises(tl.ThroughputLabError) as e:
        tl.run(str(bad_path))
    cli = tlab("run", str(bad_path), ok=False).removeprefix("tlab: ").strip()
    assert str(e.value) == cli
    assert "workload.classes[0].rate" in str(e.value)
    with pytest.raises(tl.ThroughputLabError, match=r"workload\.classes\[0\]\.rate"):
        tl.run(bad)
    with pytest.raises(tl.ThroughputLabError, match="no such file, link or preset"):
        tl.run("no-such-preset")
    with pytest.raises(tl.ThroughputLabError, match="not a share link"):
        tl.from_link("https://example.org/")
    # A value out of range, named by its parameter.
    with pytest.raises(tl.ThroughputLabError, match="arrival.rate"):
        tl.run(s, arrival__rate=-3)


def test_a_report_reads_as_attributes_and_tables():
    r = tl.run("chatbot-h100", duration=60)
    d = json.loads(r.json)
    assert r.overall.ttft.p99_ms == d["overall"]["ttft"]["p99_ms"]
    assert r.requests.completed == d["requests"]["completed"] > 0
    assert [c.name for c in r.per_class] == [c["name"] for c in d["per_class"]]
    with pytest.raises(AttributeError, match="no field 'nosuch'"):
        r.nosuch
    tables = r.to_pandas()
    classes = tables["classes"]
    assert list(classes["name"]) == ["all"] + [c["name"] for c in d["per_class"]]
    assert classes.loc[0, "ttft.p99_ms"] == d["overall"]["ttft"]["p99_ms"]
    series = tables["series"]
    assert len(series) == len(d["series"]["t_s"]) > 10
    assert list(series["queue_depth"]) == d["series"]["queue_depth"]


def test_runs_release_the_gil():
    # While a run goes on in a thread, this thread keeps counting: with the
    # GIL held through the run it could not count at all.
    started = threading.Event()
    s = tl.scenario("chatbot-h100", duration=3600)

    def work():
        started.set()
        tl.run(s)

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    counted = 0
    while t.is_alive():
        counted += 1
    t.join()
    assert counted > 10_000, counted


def test_a_link_made_in_python_is_left_for_the_page(root):
    # The browser tests open this link on the page and compare its cards with
    # these numbers (tests/e2e/python-link.test.mjs); `cargo xtask test` runs
    # them after these.
    s = tl.scenario("chatbot-h100", arrival__rate=12, prefix_caching=False, duration=120)
    url = tl.link(s, "http://127.0.0.1:8080/")
    r = tl.run(url)
    assert r.json == tl.run(s).json
    out = root / "tests/artifacts/python-link.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "fragment": url[url.index("#"):],
        "output_tokens_per_s": r.throughput.output_tokens_per_s,
        "ttft_p99_ms": r.overall.ttft.p99_ms,
        "e2e_p50_ms": r.overall.e2e.p50_ms,
        "usd_per_month": r.cost.usd_per_month,
    }))


def test_ranges_are_the_clis_and_say_where_the_run_sits(tlab, tmp_path):
    path = tmp_path / "chatbot.json"
    path.write_text(tlab("preset", "chatbot-h100"))
    cli = tlab("run", str(path), "--set", "arrival.rate=32", "--ranges", "--json")
    r = tl.ranges(str(path), arrival__rate=32)
    assert r.json == cli
    d = json.loads(r.json)["ranges"]
    assert d["verdict"] == "near_the_knee"
    f = d["figures"]["ttft_p99_ms"]
    assert f["low"] <= f["value"] <= f["high"]
    assert d["runs"] == 9 and 0 < d["meeting_targets"] < 9
    # The fleet's ranges: the replicas that meet the targets at each end.
    n = d["figures"]["replicas_for_targets"]
    assert (n["low"], n["value"], n["high"]) == (1, 2, 2)
    # The report beside the ranges is the plain run's.
    plain = json.loads(tl.run(str(path), arrival__rate=32).json)
    assert {k: v for k, v in json.loads(r.json).items() if k != "ranges"} == plain
