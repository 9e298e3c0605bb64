//! Reading a scenario document: every error names the field (its path in the
//! document), what the field takes and the value found — for syntax errors
//! too (NaN, Infinity, a stray comma), and inside tagged blocks (arrival,
//! batching, distributions, client policy), where serde alone can only point
//! at the block.

use super::{Scenario, ScenarioError, ValidScenario};
use serde_json::Value;

/// Parse a scenario from JSON and validate it. A UTF-8 byte-order mark is
/// ignored; trailing text after the document is an error.
pub fn from_json(text: &str) -> Result<ValidScenario, ScenarioError> {
    let text = crate::text::without_bom(text);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed: Result<Scenario, _> = serde_path_to_error::deserialize(&mut de);
    let s = match parsed {
        Ok(s) => s,
        Err(e) => {
            let path = e.path().to_string();
            return Err(problem(describe(text, &path, e.inner())));
        }
    };
    if let Err(e) = de.end() {
        return Err(problem(describe(text, ".", &e)));
    }
    s.validate()
}

fn problem(p: String) -> ScenarioError {
    ScenarioError { problems: vec![p] }
}

/// "PATH: what is wrong" for a serde_json error at `path` (serde's view).
fn describe(text: &str, path: &str, e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match e.classify() {
        Category::Syntax | Category::Eof => {
            let offset = byte_offset(text, e.line(), e.column());
            let at = path_at(text, offset);
            let token: String = text[offset.min(text.len())..]
                .chars()
                .take_while(|c| !matches!(c, ',' | '}' | ']' | '\n'))
                .take(24)
                .collect();
            let token = token.trim();
            let what = if ["NaN", "Infinity", "-Infinity", "+Infinity", "inf", "-inf"]
                .iter()
                .any(|t| token.starts_with(t))
            {
                format!("must be a finite number (JSON has no NaN or Infinity), got {token}")
            } else if matches!(e.classify(), Category::Eof) {
                return "the scenario: the document ends too early (a brace, bracket or quote is missing)".into();
            } else {
                format!(
                    "{} (line {}, column {})",
                    strip_position(e),
                    e.line(),
                    e.column()
                )
            };
            format!("{}: {what}", shown(&at))
        }
        Category::Data | Category::Io => {
            let msg = strip_position(e);
            if path == "serving.profile" && msg.starts_with("invalid type: string") {
                return "serving.profile: a file name is read by the CLI (`tlab run`, relative to the scenario file); here the profile must be inline: the JSON object `tlab calibrate --measured DIR --fit --profile-out FILE` wrote".into();
            }
            let full = match unknown_field(&msg) {
                Some(f) if path.is_empty() || path == "." => f.to_owned(),
                Some(f) if !path.ends_with(f) => format!("{path}.{f}"),
                Some(_) => path.to_owned(),
                None => refine(text, path, &msg),
            };
            format!("{}: {}", shown(&full), plain(&msg))
        }
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() || path == "." {
        "the scenario"
    } else {
        path
    }
}

/// The field an "unknown field `x`" message names.
fn unknown_field(msg: &str) -> Option<&str> {
    msg.strip_prefix("unknown field `")?.split('`').next()
}

/// serde_json's message without its " at line L column C" tail.
fn strip_position(e: &serde_json::Error) -> String {
    let m = e.to_string();
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_owned(),
        None => m,
    }
}

/// Rust type names in serde's messages, said as a person would.
fn plain(msg: &str) -> String {
    msg.replace("expected f64", "expected a number")
        .replace(
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        )
        .replace("expected u64", "expected a whole number ≥ 0")
        .replace("expected u16", "expected a whole number from 0 to 65535")
        .replace("expected a string", "expected text")
}

/// The byte offset of serde_json's (line, column), both from 1.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return (offset + column.saturating_sub(1)).min(text.len());
        }
        offset += l.len();
    }
    text.len()
}

/// A frame of the scanner: an object (with its current key) or an array (with
/// its current index).
enum Frame {
    Object(Option<String>),
    Array(usize),
}

/// The path (`a.b[2].c`) of the value being read at byte `offset`.
fn path_at(text: &str, offset: usize) -> String {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < offset.min(bytes.len()) {
        match bytes[i] {
            b'{' => {
                stack.push(Frame::Object(None));
                expect_key = true;
            }
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object(k)) => {
                    *k = None;
                    expect_key = true;
                }
                None => {}
            },
            b':' => expect_key = false,
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if expect_key && let Some(Frame::Object(k)) = stack.last_mut() {
                    *k = Some(text.get(start..j.min(text.len())).unwrap_or("").to_owned());
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    let mut out = String::new();
    for f in &stack {
        match f {
            Frame::Object(Some(k)) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Frame::Object(None) => {}
            Frame::Array(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// Inside a tagged block serde reports the block, not the field: find the
/// field whose value the message quotes and add it to the path.
fn refine(text: &str, path: &str, msg: &str) -> String {
    let Some(quoted) = quoted_value(msg) else {
        return path.to_owned();
    };
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return path.to_owned();
    };
    let Some(node) = lookup(&doc, path) else {
        return path.to_owned();
    };
    let mut found = Vec::new();
    find_value(node, &quoted, String::new(), &mut found, 3);
    match found.as_slice() {
        [one] if !one.is_empty() => {
            if path.is_empty() || path == "." {
                one.trim_start_matches('.').to_owned()
            } else {
                format!("{path}{one}")
            }
        }
        _ => path.to_owned(),
    }
}

/// The value an "invalid type/value" message quotes, as JSON.
fn quoted_value(msg: &str) -> Option<Value> {
    let rest = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))?;
    let desc = rest.split(", expected").next()?;
    if let Some(s) = desc.strip_prefix("string \"") {
        return Some(Value::String(s.strip_suffix('"')?.to_owned()));
    }
    if desc == "null" {
        return Some(Value::Null);
    }
    let inner = desc.split('`').nth(1)?;
    if desc.starts_with("boolean") {
        return inner.parse::<bool>().ok().map(Value::Bool);
    }
    serde_json::from_str::<Value>(inner).ok()
}

fn lookup<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = doc;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            node = node.get(key)?;
        }
        for idx in indices.split('[').filter(|s| !s.is_empty()) {
            node = node.get(idx.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(node)
}

fn find_value(node: &Value, want: &Value, at: String, out: &mut Vec<String>, depth: u32) {
    let same = match (node, want) {
        // Bit for bit: -0.0 is not the 0 beside it (the error quotes `-0.0`).
        (Value::Number(a), Value::Number(b)) => {
            a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
        }
        _ => node == want,
    };
    if same {
        out.push(at.clone());
    }
    if depth == 0 {
        return;
    }
    match node {
        Value::Object(map) => {
            for (k, v) in map {
                find_value(v, want, format!("{at}.{k}"), out, depth - 1);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                find_value(v, want, format!("{at}[{i}]"), out, depth - 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        from_json(json).expect_err("invalid").problems.join("; ")
    }

    fn preset_with(pointer: &str, raw: &str) -> String {
        let mut v = serde_json::to_value(crate::presets::chatbot_h100()).expect("serialises");
        *v.pointer_mut(pointer).expect("field") = Value::String("@@".into());
        serde_json::to_string(&v)
            .expect("serialises")
            .replace("\"@@\"", raw)
    }

    #[test]
    fn syntax_errors_name_the_field_and_the_value() {
        let e = err(&preset_with("/workload/arrival/rate_per_s", "NaN"));
        assert!(
            e.starts_with("workload.arrival.rate_per_s: must be a finite number"),
            "{e}"
        );
        let e = err(&preset_with("/serving/batching/max_num_seqs", "-Infinity"));
        assert!(e.starts_with("serving.batching.max_num_seqs:"), "{e}");
        let e = err(&preset_with(
            "/workload/classes/0/input_tokens/median",
            "1e",
        ));
        assert!(
            e.starts_with("workload.classes[0].input_tokens.median:"),
            "{e}"
        );
        assert!(err("{\"version\": 1").contains("ends too early"));
    }

    #[test]
    fn type_errors_inside_tagged_blocks_name_the_field() {
        let e = err(&preset_with("/workload/arrival/rate_per_s", "\"fast\""));
        assert!(
            e.starts_with(
                "workload.arrival.rate_per_s: invalid type: string \"fast\", expected a number"
            ),
            "{e}"
        );
        let e = err(&preset_with("/serving/batching/chunk_tokens", "-5"));
        assert!(
            e.starts_with("serving.batching.chunk_tokens: invalid value"),
            "{e}"
        );
        assert!(e.contains("-5"), "{e}");
        let e = err(&preset_with(
            "/workload/classes/0/output_tokens/p90",
            "true",
        ));
        assert!(
            e.starts_with("workload.classes[0].output_tokens.p90:"),
            "{e}"
        );
        let e = err(&preset_with("/serving/replicas", "\"two\""));
        assert!(e.starts_with("serving.replicas: invalid type"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_is_ignored_and_trailing_text_refused() {
        let json = serde_json::to_string(&crate::presets::chatbot_h100()).expect("serialises");
        assert!(from_json(&format!("\u{feff}{json}")).is_ok());
        let e = err(&format!("{json} extra"));
        assert!(e.contains("trailing"), "{e}");
    }
}
