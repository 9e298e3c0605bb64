"""Writes launch-from-a-trace.ipynb beside this file (outputs cleared):
edit the cells here, then run it with the package installed."""

import pathlib

import nbformat as nbf

nb = nbf.v4.new_notebook()
md = nbf.v4.new_markdown_cell
code = nbf.v4.new_code_cell
nb.cells = [
    md("""# Launch day from a real trace

One question end to end, from Python: a real request trace (the first 2,000
requests of Mooncake's conversation trace) becomes a scenario small enough
to share; the planner sizes a self-hosted fleet for it on three GPU kinds;
two API tiers price the same traffic; one chart puts cost beside p99 TTFT;
and the cheapest setup that meets the targets opens on the page as a link.

Every number below comes from the simulator (`throughput_lab`, the same
core as the page and `tlab`): run it again and they are the same."""),
    code("""import pathlib

import matplotlib.pyplot as plt

import throughput_lab as tl

ROOT = next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "sim-core").is_dir())
TRACE = ROOT / "sim-core/tests/traces/mooncake-first-2000.jsonl"
trace = tl.read_trace(TRACE)
print(trace["summary"])"""),
    md("## The trace as a scenario\n\nDistilled onto the chatbot preset's fleet: a rate schedule, quantile tables of lengths, shared prefixes. What it loses is said."),
    code("""scenario, loses = tl.distil(TRACE, onto="chatbot-h100")
for line in loses:
    print("-", line)
print(len(tl.link(scenario)), "characters of link")"""),
    md("## The fleet for it, on three GPU kinds\n\nThe cheapest setups that keep p99 TTFT within 2 s (this trace's prompts run to thousands of tokens) and the scenario's time-per-token target, each replica count found by simulation, up to 8 replicas."),
    code("""plan = tl.plan(scenario, gpus=["h100", "l40s", "a100"], max_replicas=8, ttft_p99_ms=2000)
for note in plan.notes:
    print(note)
setups = plan.to_pandas()
assert len(setups) > 0, plan.notes
setups[["description", "replicas", "usd_per_month", "summary.ttft_p99_ms", "summary.tpot_p99_ms"]].head(10)"""),
    md("## The same traffic on two API tiers\n\nThe launch-spike preset's two tiers (a frontier model and a small one), with their rate limits and prices."),
    code("""api = dict(scenario, api=tl.preset("launch-spike")["api"])
tiers = {}
for tier in ["frontier", "small"]:
    # Every class of the workload to the tier.
    r = tl.run(api, set={f"backend[{c['name']}]": tier for c in api["workload"]["classes"]})
    tiers[tier] = {"usd_per_month": r.cost.usd_per_month, "ttft_p99_ms": r.overall.ttft.p99_ms,
                   "throttled": r.api.throttled_429}
tiers"""),
    md("## Cost against p99 TTFT"),
    code("""fig, ax = plt.subplots(figsize=(7, 4))
ax.scatter(setups["usd_per_month"], setups["summary.ttft_p99_ms"], label="self-hosted setups that meet the targets")
for tier, t in tiers.items():
    ax.scatter([t["usd_per_month"]], [t["ttft_p99_ms"]], marker="s", s=60, label=f"API tier: {tier}")
ax.set_xscale("log")
ax.set_xlabel("$ per month")
ax.set_ylabel("p99 TTFT, ms")
ax.legend()
plt.show()"""),
    md("## The winner, as a link\n\nThe cheapest self-hosted setup that meets the targets, applied as the page's \"Apply\" does. The link opens on the page (`cargo xtask serve`) with these numbers."),
    code("""winner = plan.feasible[0]
chosen = tl.apply(scenario, winner)
url = tl.link(chosen, "http://127.0.0.1:8080/")
report = tl.run(url)
assert report.json == tl.run(chosen).json  # the link reopens with the same numbers
print(winner.description, f"${winner.usd_per_month:,.0f}/month, p99 TTFT {report.overall.ttft.p99_ms:.0f} ms")
print(url[:100] + "…")"""),
]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, pathlib.Path(__file__).with_name("launch-from-a-trace.ipynb"))
