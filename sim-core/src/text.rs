//! Text as users' files bring it. Every reader of a user's text (scenario,
//! trace, measured run, profile, imported file) takes it through here first.

/// `text` without a leading UTF-8 byte-order mark: spreadsheet exports and
/// Windows editors start files with one, and it is never part of the data.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_byte_order_mark_goes_and_nothing_else_does() {
        assert_eq!(super::without_bom("\u{feff}a,b"), "a,b");
        assert_eq!(super::without_bom("a,b"), "a,b");
        // Only a leading one: a mark inside the text is data.
        assert_eq!(super::without_bom("a\u{feff}"), "a\u{feff}");
    }
}
