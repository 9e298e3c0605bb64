//! The command line: `tlab`'s subcommands and their flags (clap), with the
//! targets flags `plan` and `headroom` share.

use clap::{Parser, Subcommand};
use sim_core::Scenario;
use std::path::PathBuf;
use tlab::trace;

#[derive(Parser)]
#[command(name = "tlab", version, about = "Simulate LLM inference under load")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The targets of `plan` and `headroom` (one definition: sim-core's
/// `PlanSlo::for_scenario`, which the page's planner uses too). Each flag
/// overrides one; without it the scenario's own target holds.
#[derive(clap::Args)]
pub(crate) struct SloArgs {
    /// p99 time-to-first-token target, ms [default: the scenario's slo.ttft_ms].
    #[arg(long)]
    pub(crate) ttft_p99_ms: Option<f64>,
    /// p99 time-per-output-token target, ms [default: the scenario's slo.tpot_ms].
    #[arg(long)]
    pub(crate) tpot_p99_ms: Option<f64>,
    /// Largest share of requests that may fail, be refused or time out [default: 0.01].
    #[arg(long)]
    pub(crate) max_errors: Option<f64>,
    /// Smallest share of requests meeting the scenario's SLO [default: 0.9].
    #[arg(long)]
    pub(crate) min_goodput: Option<f64>,
}

impl SloArgs {
    /// The question these flags ask, with no space options.
    pub(crate) fn ask(&self) -> tlab::plan_ask::PlanAsk {
        tlab::plan_ask::PlanAsk {
            ttft_p99_ms: self.ttft_p99_ms,
            tpot_p99_ms: self.tpot_p99_ms,
            max_errors: self.max_errors,
            min_goodput: self.min_goodput,
            ..Default::default()
        }
    }

    /// The targets for `s`, each flag given overriding the scenario's.
    pub(crate) fn targets(&self, s: &Scenario) -> Result<sim_core::plan::PlanSlo, String> {
        self.ask().targets(s, tlab::plan_ask::flag)
    }
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a scenario file and print a summary (or the full report with --json).
    Run {
        /// Scenario JSON file ("-" reads standard input), or a share link
        /// copied from the page.
        scenario: PathBuf,
        /// Print the full report as JSON.
        #[arg(long)]
        json: bool,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Replay a real request trace (Mooncake or request-log JSON lines,
        /// Azure or BurstGPT CSV, vllm bench serve JSON) as the arrivals, on
        /// the scenario's fleet.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        #[command(flatten)]
        trace_args: trace::TraceArgs,
        /// Also run the scenario with its step times at the profile's
        /// measured error (p10, p90) and over seeds, and give every headline
        /// figure its range, the share meeting the targets and a verdict.
        #[arg(long, conflicts_with = "trace")]
        ranges: bool,
    },
    /// What a real request trace holds: its format, rate, lengths and prefix reuse.
    Trace {
        /// The trace file (format detected).
        file: PathBuf,
        #[command(flatten)]
        trace_args: trace::TraceArgs,
        /// Distil the trace into a scenario that fits a share link (rate
        /// schedule, quantile tables of lengths, shared prefixes) on this
        /// scenario's fleet, and run it beside the exact replay.
        #[arg(long, value_name = "SCENARIO")]
        distil: Option<PathBuf>,
        /// With --distil: write the distilled scenario here (JSON).
        #[arg(long, requires = "distil", value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Monthly cost on an API tier vs self-hosted as load grows, and the crossover.
    Compare {
        /// Scenario JSON file with an `api` section ("-" reads standard input).
        scenario: PathBuf,
        /// API tier name (default: the first tier).
        #[arg(long)]
        tier: Option<String>,
        /// Loads in tasks/s, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "0.5,1,2,5,10,20,50,100")]
        loads: Vec<f64>,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Vary one or two parameters and tabulate the summary metrics (CSV), with a chart.
    Sweep {
        /// Scenario JSON file ("-" reads standard input).
        scenario: PathBuf,
        /// NAME=START:STOP:STEP or NAME=A,B,C; once or twice (parameters: see --help-parameters).
        #[arg(long = "vary", required_unless_present = "help_parameters")]
        vary: Vec<String>,
        /// Write the CSV here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write an SVG chart here.
        #[arg(long)]
        chart: Option<PathBuf>,
        /// Run the points one after another instead of in parallel.
        #[arg(long)]
        serial: bool,
        /// List the parameters a sweep can vary.
        #[arg(long)]
        help_parameters: bool,
    },
    /// Latency against throughput for every batching policy as load rises.
    Curve {
        /// Scenario JSON file with a Poisson or gamma arrival process.
        scenario: PathBuf,
        /// Arrival rates, START:STOP:STEP or A,B,C.
        #[arg(long, default_value = "1:40:3")]
        rates: String,
        /// Write an SVG chart here.
        #[arg(long)]
        chart: Option<PathBuf>,
        /// Print the curves as JSON.
        #[arg(long)]
        json: bool,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// The cheapest setups that meet the targets at the scenario's load.
    Plan {
        /// Scenario JSON file: the workload and load (and API tiers, if any).
        scenario: PathBuf,
        #[command(flatten)]
        slo: SloArgs,
        /// Most replicas to consider.
        #[arg(long, default_value_t = 64)]
        max_replicas: u32,
        /// GPUs to consider, comma-separated catalogue keys (`all` for the
        /// whole catalogue, 13 GPUs; default: a100,h100,h200,l4,l40s,mi300x).
        #[arg(long, value_delimiter = ',')]
        gpus: Vec<String>,
        /// Also consider self-hosting when API tiers serve the scenario (the
        /// fleet's model: a different model from the API's).
        #[arg(long)]
        self_hosted: bool,
        /// Run the searches one after another instead of in parallel.
        #[arg(long)]
        serial: bool,
        /// Plan pools: each class on a pool or API tier of its own against
        /// its own targets, autoscaling tried where the load varies, the
        /// classes' answers run together, against one setup for everything.
        #[arg(long)]
        pools: bool,
        /// Plan a split into prefill and decode pools (xPyD): the cheapest
        /// ratio that meets the targets, beside the fewest colocated replicas.
        #[arg(long, conflicts_with = "pools")]
        split: bool,
        /// With --split: the KV-cache link (nvlink, infiniband, roce, ethernet).
        #[arg(long, requires = "split")]
        link: Option<String>,
        /// Plan on the whole scenario however long it takes (by default a
        /// plan stays within a work budget of simulated events, said up front).
        #[arg(long)]
        full: bool,
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Check the cheapest setups over their range runs (the profile's
        /// measured step-time error, three seeds) and answer with the
        /// cheapest meeting the targets in at least this share of them
        /// (0.5–1; 0.9 needs 9 of 9), beside the point answer.
        #[arg(long, value_name = "SHARE", conflicts_with_all = ["pools", "split"])]
        confidence: Option<f64>,
    },
    /// How far the scenario's load can grow before the targets break.
    Headroom {
        /// Scenario JSON file.
        scenario: PathBuf,
        #[command(flatten)]
        slo: SloArgs,
        /// Change a parameter first, NAME=VALUE (as a sweep axis names it; see
        /// `tlab sweep --help-parameters`); may be repeated.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Real vLLM runs against the simulator: a table per row, MAPE per metric
    /// and per model; with --fit, fit the vLLM profile's constants.
    Calibrate {
        /// The runs, as CSV files of the same columns, fitted and shown
        /// together (data/calibration/vllm-h100-runs.csv
        /// data/calibration/vllm-h100-runs-2.csv).
        #[arg(required_unless_present = "measured")]
        csv: Vec<PathBuf>,
        /// A measured run instead: a directory with requests.jsonl (and
        /// meta.json, timeseries.csv when there), or the request log itself,
        /// replayed strictly and compared with the simulation per metric.
        /// With --fit, vLLM's profile is fitted to the run (its KV
        /// reservation, then its step-time constants).
        #[arg(long, conflicts_with_all = ["leave_out", "fit_below", "from_current", "moe"])]
        measured: Option<PathBuf>,
        /// With --measured --fit: also fit on half of the requests and score
        /// the other half (every other request; first half in time → second).
        #[arg(long, requires = "measured")]
        holdout: bool,
        /// With --measured --fit: write the fitted profile to this file (JSON;
        /// a scenario names it as serving.profile).
        #[arg(long, requires = "fit", value_name = "FILE")]
        profile_out: Option<PathBuf>,
        /// Fit a profile's constants (least squares on log errors) and print
        /// them, then the table with them: vLLM's on vLLM runs, TensorRT-LLM
        /// 1.x's on MLPerf and InferenceX files (their Offline and
        /// InferenceX rows of TensorRT-LLM).
        #[arg(long)]
        fit: bool,
        /// Leave a model or an experiment out of the fit (substring of its
        /// name), to see how well runs the fit never saw are predicted; on
        /// MLPerf and InferenceX files, a GPU (h200, b200, ...): the fit
        /// without its rows, and its rows alone in the table.
        #[arg(long)]
        leave_out: Option<String>,
        /// Fit only on rows whose load stays at or under this rate (req/s)
        /// and show the rows above it (leave one load out).
        #[arg(long)]
        fit_below: Option<f64>,
        /// Rounds of the coordinate search.
        #[arg(long, default_value_t = 40)]
        rounds: u32,
        /// Start the fit from the profile's constants instead of the priors.
        #[arg(long)]
        from_current: bool,
        /// Include mixture-of-experts rows (dense rows only by default).
        #[arg(long)]
        moe: bool,
        /// Time the steps with this software's constants: vllm (the fitted
        /// profile) or tensorrt-llm (the first version's, to see what the fit
        /// changed). Memory is sized as vLLM does either way.
        #[arg(long, default_value = "vllm", value_parser = ["vllm", "tensorrt-llm"])]
        timing: String,
        /// With --fit on MLPerf and InferenceX files: the profile to fit,
        /// tensorrt-llm-1 (MLPerf Offline and InferenceX rows of
        /// TensorRT-LLM), sglang (InferenceX rows of SGLang on NVIDIA GPUs)
        /// or sglang-rocm (on AMD GPUs).
        #[arg(long, default_value = "tensorrt-llm-1", value_parser = ["tensorrt-llm-1", "sglang", "sglang-rocm"], requires = "fit")]
        software: String,
        /// For MLPerf and InferenceX files: print {"rows": [...], "summary":
        /// {...}} as JSON instead of the tables.
        #[arg(long)]
        json: bool,
        /// Print the step-time error bands of the rows compared, per GPU ×
        /// profile × model family, as JSON (`sim-core/src/ranges/bands.json`
        /// is this over every file of data/calibration/, with --moe).
        #[arg(long, conflicts_with = "json")]
        bands: bool,
        /// How often each row's measured figures fall inside the range its
        /// range runs give, with the committed bands and held out
        /// (`docs/ranges.md`): vLLM runs, and InferenceX rows when the
        /// public files are given (their bands read from every public row).
        #[arg(long, conflicts_with_all = ["json", "bands"])]
        coverage: bool,
        /// The power model against the InferenceX runs with measured power,
        /// each at the work it measured: watts and joules per output token,
        /// with the committed coefficients and those fitted to the runs.
        #[arg(long, conflicts_with_all = ["json", "bands", "coverage", "fit"])]
        power: bool,
    },
    /// List the built-in presets.
    Presets,
    /// A preset's story step by step, each claim checked against its step's run.
    Story {
        /// Preset id (see `tlab presets`).
        id: String,
    },
    /// Print a preset's scenario as JSON, ready to edit and run.
    Preset {
        /// Preset id (see `tlab presets`).
        id: String,
    },
}
