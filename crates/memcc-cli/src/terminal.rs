//! What MemCC prints of text it did not write (a session id a transcript chose, a file name, a
//! logged error), as a terminal shows it safely.

/// `text` with its control characters (an escape sequence, a carriage return) as `\u{…}`.
pub fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(super::printable("s\u{1b}[2J\r1"), "s\\u{1b}[2J\\u{d}1");
        assert_eq!(super::printable("plain 中文"), "plain 中文");
    }
}
