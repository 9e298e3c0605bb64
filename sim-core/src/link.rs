//! Share links: a whole scenario in a URL fragment, `#s=v1.<base64url>`.
//!
//! The payload is the scenario's JSON, raw-DEFLATE-compressed and base64url
//! encoded (no padding). Decoding never trusts the link: it checks the prefix and
//! version, bounds every size, and validates the scenario; each failure says what
//! was wrong. Nothing from a link is ever interpreted as anything but data.

use crate::scenario::{Scenario, ScenarioError, ValidScenario};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The link format this build writes and reads.
pub const LINK_VERSION: u32 = 1;
/// Longest link payload accepted, characters.
pub const MAX_LINK_CHARS: usize = 200_000;
/// Largest scenario a link may expand to, bytes.
pub const MAX_SCENARIO_BYTES: usize = 4 * 1024 * 1024;

/// Why a link could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The fragment does not carry a scenario (`#s=` is missing).
    NotALink,
    /// The payload does not start with a version (`v1.`).
    NoVersion,
    /// Made by another version of the format.
    UnknownVersion(String),
    /// Longer than [`MAX_LINK_CHARS`].
    TooLong(usize),
    /// A character that base64url does not use, at a position.
    BadCharacter(char, usize),
    /// Not decodable as base64url (wrong length).
    BadEncoding,
    /// The compressed data is cut short or damaged.
    Damaged,
    /// Expands beyond [`MAX_SCENARIO_BYTES`].
    TooLarge,
    /// Not a scenario document, or a scenario with invalid values.
    Invalid(ScenarioError),
    /// Valid, but its own link would exceed the bounds: (JSON bytes, link
    /// characters). Refused at the same bounds both ways, so every link that
    /// opens can be shared again.
    TooLargeToShare(usize, usize),
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkError::NotALink => write!(
                f,
                "the link holds no scenario (expected #s=v{LINK_VERSION}.…)"
            ),
            LinkError::NoVersion => write!(
                f,
                "the link has no format version (expected it to start with v{LINK_VERSION}.)"
            ),
            LinkError::UnknownVersion(v) => write!(
                f,
                "the link uses format {v}, but this page reads v{LINK_VERSION}: it was made by another version of Throughput Lab"
            ),
            LinkError::TooLong(n) => write!(
                f,
                "the link is {n} characters long; at most {MAX_LINK_CHARS} are accepted"
            ),
            LinkError::BadCharacter(c, i) => write!(
                f,
                "the link is damaged: {c:?} at position {i} cannot appear in it"
            ),
            LinkError::BadEncoding => write!(
                f,
                "the link is damaged or cut short: its encoding is incomplete"
            ),
            LinkError::Damaged => write!(
                f,
                "the link is damaged or cut short: its compressed scenario is incomplete"
            ),
            LinkError::TooLarge => write!(
                f,
                "the link expands to more than {MAX_SCENARIO_BYTES} bytes; it is not a scenario this page can open"
            ),
            LinkError::Invalid(e) => write!(
                f,
                "the link's scenario cannot be used: {}",
                e.problems.join("; ")
            ),
            LinkError::TooLargeToShare(bytes, chars) => write!(
                f,
                "the link's scenario is {bytes} bytes of JSON and its link {chars} characters; at most {MAX_SCENARIO_BYTES} bytes and {MAX_LINK_CHARS} characters can be shared, so it is refused here too (run it as a file with tlab)"
            ),
        }
    }
}

impl std::error::Error for LinkError {}

/// The payload for a scenario: `v1.<base64url(deflate(json))>`.
pub fn encode(scenario: &Scenario) -> String {
    // Serialising a scenario cannot fail: every field is a plain value.
    let json = serde_json::to_vec(scenario).unwrap_or_default();
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("v{LINK_VERSION}.{}", URL_SAFE_NO_PAD.encode(packed))
}

/// The URL fragment for a scenario, `#s=v1.…`.
pub fn encode_fragment(scenario: &Scenario) -> String {
    format!("#s={}", encode(scenario))
}

/// Read a payload made by [`encode`].
pub fn decode(payload: &str) -> Result<ValidScenario, LinkError> {
    decode_detail(payload).map(|d| d.scenario)
}

/// A decoded link, and what it says about when it was made.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The scenario.
    pub scenario: ValidScenario,
    /// The link names no serving software: it was made before profiles
    /// existed, and its numbers are TensorRT-LLM's 2023 constants.
    pub before_profiles: bool,
}

/// [`decode`], also saying whether the link predates serving-software profiles.
pub fn decode_detail(payload: &str) -> Result<Decoded, LinkError> {
    if payload.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLong(payload.len()));
    }
    let (version, data) = payload.split_once('.').ok_or(LinkError::NoVersion)?;
    if !version.starts_with('v')
        || version.len() < 2
        || !version[1..].bytes().all(|b| b.is_ascii_digit())
    {
        return Err(LinkError::NoVersion);
    }
    if version != format!("v{LINK_VERSION}") {
        return Err(LinkError::UnknownVersion(
            version.chars().take(12).collect(),
        ));
    }
    if let Some((i, c)) = data
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(LinkError::BadCharacter(c, version.len() + 1 + i));
    }
    let packed = URL_SAFE_NO_PAD
        .decode(data)
        .map_err(|_| LinkError::BadEncoding)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_SCENARIO_BYTES)
        .map_err(|e| {
            if matches!(e.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
                LinkError::TooLarge
            } else {
                LinkError::Damaged
            }
        })?;
    let text = std::str::from_utf8(&json).map_err(|_| LinkError::Damaged)?;
    let doc = serde_json::from_str::<serde_json::Value>(text).ok();
    // A link made while a day's time limit could sit inside a longer
    // arrival window ran cut short without saying so; it now runs its whole
    // window (validation refuses such a limit in a file).
    let lifted = doc.as_ref().and_then(|v| {
        let duration = v.get("duration_s")?.as_f64()?;
        let limit = v.pointer("/limits/max_sim_time_s")?.as_f64()?;
        (limit < duration).then(|| {
            let mut v = v.clone();
            v["limits"]["max_sim_time_s"] = duration.into();
            v.to_string()
        })
    });
    let s = Scenario::from_json(lifted.as_deref().unwrap_or(text)).map_err(LinkError::Invalid)?;
    shareable(&s)?;
    // Valid JSON here: whether its serving section names the software.
    let before_profiles = doc.is_some_and(|v| v["serving"].get("software").is_none());
    Ok(Decoded {
        scenario: s,
        before_profiles,
    })
}

/// Check that a scenario's own link stays within the bounds [`decode`] accepts.
pub fn shareable(s: &Scenario) -> Result<(), LinkError> {
    let bytes = serde_json::to_vec(s).map_or(usize::MAX, |j| j.len());
    let chars = encode(s).len();
    if bytes > MAX_SCENARIO_BYTES || chars > MAX_LINK_CHARS {
        return Err(LinkError::TooLargeToShare(bytes, chars));
    }
    Ok(())
}

/// The URL fragment for a scenario compared with a pinned scenario A:
/// `#s=v1.…&a=v1.…` (A is left out if the two together would pass the link
/// bound).
pub fn encode_fragment_compared(scenario: &Scenario, a: Option<&Scenario>) -> String {
    let b = encode(scenario);
    match a.map(encode) {
        Some(a) if a.len() + b.len() <= MAX_LINK_CHARS => format!("#s={b}&a={a}"),
        _ => format!("#s={b}"),
    }
}

/// The pinned scenario A a fragment carries (`&a=v1.…`), if any.
pub fn decode_fragment_pinned(fragment: &str) -> Option<Result<ValidScenario, LinkError>> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    f.split('&').find_map(|p| p.strip_prefix("a=")).map(decode)
}

/// Read a URL fragment (`#s=v1.…`, with or without the `#`); other `&`-separated
/// parameters are ignored.
pub fn decode_fragment(fragment: &str) -> Result<ValidScenario, LinkError> {
    decode_fragment_detail(fragment).map(|d| d.scenario)
}

/// [`decode_fragment`], also saying whether the link predates profiles.
pub fn decode_fragment_detail(fragment: &str) -> Result<Decoded, LinkError> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    let payload = f
        .split('&')
        .find_map(|p| p.strip_prefix("s="))
        .ok_or(LinkError::NotALink)?;
    decode_detail(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn a_fragment_carries_the_pinned_scenario_a() {
        let b = presets::chatbot_h100();
        let a = presets::self_hosted_tuning();
        let f = encode_fragment_compared(&b, Some(&a));
        assert_eq!(decode_fragment(&f).expect("B").into_inner(), b);
        assert_eq!(
            decode_fragment_pinned(&f)
                .expect("A present")
                .expect("A")
                .into_inner(),
            a
        );
        assert!(decode_fragment_pinned(&encode_fragment(&b)).is_none());
        assert!(matches!(
            decode_fragment_pinned("#s=x&a=v9.zz"),
            Some(Err(LinkError::UnknownVersion(_)))
        ));
    }
    use crate::rng::{Stream, StreamId};

    #[test]
    fn a_link_that_opens_can_be_shared_again() {
        // A trace written compactly (times as `0`, which this build writes as
        // `0.0`): inside the size bound as written, past it once re-encoded.
        let trace = |n: usize| {
            let mut v = serde_json::to_value(presets::chatbot_h100()).expect("serialises");
            let req = serde_json::json!({"at_s": 0, "input_tokens": 100, "output_tokens": 50});
            v["workload"]["arrival"] =
                serde_json::json!({"kind": "trace", "requests": vec![req; n]});
            serde_json::to_string(&v).expect("serialises")
        };
        let (one, two) = (trace(1).len(), trace(2).len());
        let per = two - one;
        // The largest trace whose compact JSON fits, and which then grows 2
        // bytes a request when re-encoded.
        let n = (MAX_SCENARIO_BYTES - (one - per)) / per;
        let compact = trace(n);
        assert!(compact.len() <= MAX_SCENARIO_BYTES);
        let link = format!(
            "v{LINK_VERSION}.{}",
            URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(compact.as_bytes(), 9))
        );
        assert!(link.len() <= MAX_LINK_CHARS, "{} characters", link.len());
        let err = decode(&link).expect_err("its own link would be too large");
        assert!(matches!(err, LinkError::TooLargeToShare(..)), "{err}");
        assert!(err.to_string().contains("can be shared"), "{err}");
        // A little smaller, it opens, and its own link opens too.
        let small = trace(n / 2);
        let link = format!(
            "v{LINK_VERSION}.{}",
            URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(small.as_bytes(), 9))
        );
        let s = decode(&link).expect("opens");
        assert_eq!(decode(&encode(&s)).expect("opens again"), s);
    }

    #[test]
    fn every_preset_round_trips_exactly_and_compactly() {
        for p in presets::all() {
            let link = encode_fragment(&p.scenario);
            assert!(link.len() < 2_000, "{}: {} characters", p.id, link.len());
            assert_eq!(
                *decode_fragment(&link).expect("round trip"),
                p.scenario,
                "{}",
                p.id
            );
        }
    }

    #[test]
    fn each_kind_of_bad_link_says_what_is_wrong() {
        let good = encode(&presets::chatbot_h100());
        let cases: Vec<(String, &str)> = vec![
            ("#x=1".into(), "holds no scenario"),
            ("#s=abc".into(), "no format version"),
            (
                format!("#s=v2.{}", &good[3..]),
                "format v2, but this page reads v1",
            ),
            (format!("#s={}", &good[..good.len() / 2]), "cut short"),
            (format!("#s={}<script>", good), "'<' at position"),
            (
                format!("#s=v1.{}", URL_SAFE_NO_PAD.encode(b"not deflate at all")),
                "damaged",
            ),
            (
                format!(
                    "#s=v1.{}",
                    URL_SAFE_NO_PAD
                        .encode(miniz_oxide::deflate::compress_to_vec(b"{\"version\":1}", 6))
                ),
                "missing field",
            ),
            (format!("#s=v1.{}", "A".repeat(MAX_LINK_CHARS)), "at most"),
        ];
        for (link, needle) in cases {
            let err = decode_fragment(&link).expect_err(&link).to_string();
            assert!(err.contains(needle), "{link:.60}: {err}");
        }
        // Valid JSON, invalid values: the validator's message comes through.
        let mut s = presets::chatbot_h100();
        s.serving.replicas = 0;
        let err = decode(&encode(&s)).expect_err("invalid").to_string();
        assert!(
            err.contains("serving.replicas must be 1..=1024, got 0"),
            "{err}"
        );
    }

    #[test]
    fn a_compression_bomb_is_refused() {
        let bomb = vec![b' '; MAX_SCENARIO_BYTES + 10];
        let link = format!(
            "v1.{}",
            URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&bomb, 9))
        );
        assert_eq!(decode(&link), Err(LinkError::TooLarge));
    }

    /// 10⁵ random, truncated and mutated links and scenario documents: no panic,
    /// and every rejection names its problem.
    #[test]
    fn fuzzed_links_and_documents_never_panic() {
        let mut rng = Stream::new(99, StreamId(77));
        let valid: Vec<String> = presets::all().iter().map(|p| encode(&p.scenario)).collect();
        let docs: Vec<String> = presets::all()
            .iter()
            .map(|p| serde_json::to_string(&p.scenario).unwrap_or_default())
            .collect();
        let alphabet: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.v=#&%<>\"' \u{e9}\u{1F600}".chars().collect();
        let pick = |rng: &mut Stream, n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
        let mut rejected = 0;
        for i in 0..100_000 {
            let kind = i % 5;
            let input: String = match kind {
                // Random strings.
                0 => (0..pick(&mut rng, 300))
                    .map(|_| alphabet[pick(&mut rng, alphabet.len())])
                    .collect(),
                // Truncated valid links.
                1 => {
                    let v = &valid[pick(&mut rng, valid.len())];
                    v[..pick(&mut rng, v.len())].to_owned()
                }
                // Valid links with characters replaced.
                2 => {
                    let mut v: Vec<char> = valid[pick(&mut rng, valid.len())].chars().collect();
                    for _ in 0..1 + pick(&mut rng, 4) {
                        let at = pick(&mut rng, v.len());
                        v[at] = alphabet[pick(&mut rng, alphabet.len())];
                    }
                    v.into_iter().collect()
                }
                // Mutated JSON documents re-encoded as links (exercise the parser
                // and validator behind a well-formed envelope).
                3 => {
                    let mut d: Vec<char> = docs[pick(&mut rng, docs.len())].chars().collect();
                    for _ in 0..1 + pick(&mut rng, 3) {
                        let at = pick(&mut rng, d.len());
                        match pick(&mut rng, 3) {
                            0 => {
                                d[at] = "0123456789-.e,:{}[]\"tfn"
                                    .chars()
                                    .nth(pick(&mut rng, 23))
                                    .unwrap_or('0')
                            }
                            1 => {
                                d.remove(at);
                            }
                            _ => {
                                d.insert(at, "-9e999".chars().nth(pick(&mut rng, 6)).unwrap_or('9'))
                            }
                        }
                    }
                    let text: String = d.into_iter().collect();
                    // Also straight into the document parser.
                    if let Err(e) = Scenario::from_json(&text) {
                        assert!(!e.problems.is_empty() && e.problems.iter().all(|p| !p.is_empty()));
                    }
                    format!(
                        "v1.{}",
                        URL_SAFE_NO_PAD
                            .encode(miniz_oxide::deflate::compress_to_vec(text.as_bytes(), 1))
                    )
                }
                // Random bytes behind a valid envelope.
                _ => {
                    let bytes: Vec<u8> = (0..pick(&mut rng, 200))
                        .map(|_| rng.next_u64() as u8)
                        .collect();
                    format!("v1.{}", URL_SAFE_NO_PAD.encode(bytes))
                }
            };
            match decode_fragment(&format!("#s={input}")) {
                Ok(s) => assert!(s.check().is_ok()),
                Err(e) => {
                    rejected += 1;
                    let msg = e.to_string();
                    assert!(msg.len() > 20, "{input:.60}: {msg}");
                    if let LinkError::Invalid(inner) = &e {
                        assert!(inner.problems.iter().all(|p| !p.is_empty()));
                    }
                }
            }
        }
        assert!(rejected > 90_000, "only {rejected} rejected");
    }
}
