//! The vLLM runs' comparison in the public files' JSON form: one row per CSV
//! row, keyed by its `experiment` and `stage_index`, with measured and
//! simulated figures under the CSV's own column names.

use std::collections::BTreeMap;

use sim_core::physics::{Profile, ServingSoftware, Timing, VLLM_COSTS};

use super::{Compared, Source};
use crate::calibrate::{Options, Row, compare_each, read};

/// The CSV's metric columns, in the order of [`crate::calibrate::METRICS`].
const COLUMNS: [&str; 4] = [
    "ttft_mean_ms",
    "per_token_mean_ms",
    "e2e_mean_ms",
    "e2e_p99_ms",
];

/// Every row of the vLLM CSVs `texts` (mixture-of-experts rows with
/// `moe`), each with its line in its file (the header is line 1).
pub fn read_all(texts: &[(String, String)], moe: bool) -> Result<Vec<(usize, Row)>, String> {
    let mut all = Vec::new();
    for (name, text) in texts {
        let rows = read(sim_core::text::without_bom(text)).map_err(|e| format!("{name}: {e}"))?;
        all.extend(
            rows.into_iter()
                .enumerate()
                .map(|(i, r)| (i + 2, r))
                .filter(|(_, r)| moe || !r.is_moe()),
        );
    }
    Ok(all)
}

/// Every row of the vLLM CSVs `texts` compared with the profile `opt.timing`
/// names (mixture-of-experts rows with `opt.moe`), in file order; an
/// experiment that cannot run gives its rows with the reason.
pub fn rows(texts: &[(String, String)], opt: &Options) -> Result<Vec<Compared>, String> {
    if opt.fit || opt.leave_out.is_some() || opt.fit_below.is_some() {
        return Err("--json compares; fit with the tables (drop --json)".into());
    }
    let (timing, software) = match opt.timing.as_str() {
        "tensorrt-llm" => (Profile::TENSORRT_LLM.timing, ServingSoftware::TensorrtLlm),
        _ => (Timing::Serving(VLLM_COSTS), ServingSoftware::Vllm),
    };
    let all = read_all(texts, opt.moe)?;
    let only: Vec<Row> = all.iter().map(|(_, r)| r.clone()).collect();
    let (table, failed) = compare_each(&only, timing);
    let mut ran = table.into_iter();
    Ok(all
        .into_iter()
        .map(|(line, row)| {
            let keys = BTreeMap::from([
                ("experiment", row.experiment.clone().into()),
                ("stage_index", row.stage_index.into()),
            ]);
            let group = [row.gpu.as_str(), "vLLM", row.model_name()];
            if let Some((_, why)) = failed.iter().find(|(e, _)| *e == row.experiment) {
                return Compared::refused(Source::Vllm, line, keys, group, why.clone());
            }
            let Some(c) = ran.next() else {
                return Compared::refused(Source::Vllm, line, keys, group, "no run".into());
            };
            let mut out = Compared::expressed(Source::Vllm, line, keys, group, None);
            out.system = row.gpu().ok().map(|g| (g, software, row.is_moe()));
            out.point = Some(point(&row));
            for (i, name) in COLUMNS.into_iter().enumerate() {
                // A warm-up row's TTFT mean and end-to-end p99 are not
                // counted (`Comparison::counted`): shown in the tables, left
                // out here.
                if c.counted(i) {
                    out.put(name, Some(c.measured[i]), Some(c.predicted[i]));
                }
            }
            out
        })
        .collect())
}

/// Where the row ran: its model's size, its prompt (system prompt and
/// question, in the simulator's tokens) and answer, and its requests in
/// flight by Little's law (its stage's rate × its measured mean end to
/// end; none for a whole-run row, whose load changed).
pub fn point(row: &Row) -> sim_core::ranges::Point {
    let rate = usize::try_from(row.stage_index)
        .ok()
        .and_then(|i| row.stages().ok()?.get(i).map(|st| st.rate_per_s));
    sim_core::ranges::Point {
        params_b: row.dims().params() / 1e9,
        prompt_tokens: (f64::from(row.system_prompt_tokens) * crate::calibrate::RETOKENISE).round()
            + (f64::from(row.question_tokens) * crate::calibrate::RETOKENISE).round(),
        output_tokens: f64::from(row.output_tokens),
        in_flight: rate.map(|r| r * row.e2e_mean_ms / 1000.0),
    }
}
