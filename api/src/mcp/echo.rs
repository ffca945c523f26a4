//! Client text quoted back in an answer or an error (a tool name, an id, a URI), cut to a
//! length that names it without echoing a flood into answers and logs.

/// Client text quoted in an answer, cut to a length that names it without echoing a flood.
pub(crate) fn quoted(text: &str) -> String {
    const MOST: usize = 120;
    match text.char_indices().nth(MOST) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_text_is_cut_and_short_text_quoted_whole() {
        assert_eq!(super::quoted("get_agent"), "\"get_agent\"");
        let cut = super::quoted(&"é".repeat(1_000));
        assert!(cut.ends_with('…') && cut.chars().count() < 130, "{cut}");
    }
}
