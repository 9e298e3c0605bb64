//! A file the user chose, read a slice at a time (`Blob.slice`, 4 MB each)
//! and cut into lines as it goes, its SHA-256 taken on the way: a trace
//! never sits whole in the page's memory, as text or as a JavaScript
//! string, only as the requests read from it.

use sim_core::traces::{self, FileDigest, Imported, Options};
use wasm_bindgen_futures::JsFuture;

/// Bytes read at a time.
const SLICE: f64 = 4.0 * 1024.0 * 1024.0;

/// Bytes `file` holds from `at` to `end`.
async fn bytes(file: &web_sys::File, at: f64, end: f64) -> Result<Vec<u8>, String> {
    let unreadable = || format!("{} could not be read", file.name());
    let blob = file
        .slice_with_f64_and_f64(at, end)
        .map_err(|_| unreadable())?;
    let buffer = JsFuture::from(blob.array_buffer())
        .await
        .map_err(|_| unreadable())?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The first `n` bytes of `file` as text (a character cut at the end is
/// dropped): enough to tell what the file is.
pub async fn head(file: &web_sys::File, n: f64) -> Result<String, String> {
    let b = bytes(file, 0.0, n.min(file.size())).await?;
    Ok(match std::str::from_utf8(&b) {
        Ok(t) => t.to_owned(),
        Err(e) => String::from_utf8_lossy(&b[..e.valid_up_to()]).into_owned(),
    })
}

/// Each line of `file` (without its break: "\n" or "\r\n", as
/// `str::lines` cuts them) into `line` as it is read; the file's SHA-256.
/// A line that is not UTF-8 is refused by its number.
pub async fn each_line(
    file: &web_sys::File,
    mut line: impl FnMut(&str) -> Result<(), String>,
) -> Result<String, String> {
    let name = file.name();
    let mut digest = FileDigest::default();
    let (mut at, size) = (0.0, file.size());
    let mut carry: Vec<u8> = Vec::new();
    let mut n = 0usize;
    let mut one = |raw: &[u8], n: usize| -> Result<(), String> {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|e| {
            format!(
                "{name}: line {n} is not UTF-8 text (byte {})",
                e.valid_up_to() + 1
            )
        })?;
        line(text).map_err(|e| format!("{name}: {e}"))
    };
    while at < size {
        let end = (at + SLICE).min(size);
        let b = bytes(file, at, end).await?;
        digest.update(&b);
        // Whole lines straight from the slice; a line cut by its end waits
        // in `carry` for the rest.
        let mut start = 0;
        while let Some(i) = b[start..].iter().position(|&c| c == b'\n') {
            n += 1;
            let piece = &b[start..start + i];
            if carry.is_empty() {
                one(piece, n)?;
            } else {
                carry.extend_from_slice(piece);
                one(&carry, n)?;
                carry.clear();
            }
            start += i + 1;
        }
        carry.extend_from_slice(&b[start..]);
        at = end;
    }
    if !carry.is_empty() {
        one(&carry, n + 1)?;
    }
    Ok(digest.hex())
}

/// Whether text starting with `head` is a trace read a line at a time
/// (Mooncake or request-log JSON lines, Azure or BurstGPT CSV), rather
/// than a scenario, a profile or a `vllm bench serve` document.
pub fn is_line_trace(head: &str) -> bool {
    let first = sim_core::text::without_bom(head)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty());
    first.is_some_and(|l| {
        // The first line whole: a JSON document's first line is not one.
        head.contains('\n') && traces::detect(l).is_ok()
    })
}

/// The trace in `file`, read a line at a time with `options` (or why it
/// cannot be, from its first bad line on), and the file's SHA-256, taken
/// whole either way: a file that is not the trace a link names is told
/// so by its hash before anything else. Err when the file cannot be read.
pub async fn read_trace(
    file: &web_sys::File,
    options: &Options,
) -> Result<(Result<Imported, String>, String), String> {
    let name = file.name();
    // Room for about a request per 100 bytes; it grows past that.
    let mut r = traces::TraceReader::new(options, (file.size() / 100.0) as usize)
        .map_err(|e| format!("{name}: {e}"))?;
    let mut bad: Option<String> = None;
    let sha = each_line(file, |l| {
        if bad.is_none()
            && let Err(e) = r.line(l)
        {
            // A line that could be left out says how.
            bad = Some(if r.skippable() {
                format!("{e} (tick \u{201c}Leave out lines that do not read\u{201d} below to import the rest)")
            } else {
                e
            });
        }
        Ok(())
    })
    .await?;
    let t = match bad {
        Some(e) => Err(e),
        None => r.finish(),
    };
    Ok((t.map_err(|e| format!("{name}: {e}")), sha))
}
