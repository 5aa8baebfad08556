pub fn unavailable_reason() -> &'static str {
    "not implemented yet"
}
