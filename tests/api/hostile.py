"""Hostile ids and path components: traversal, absolute paths, NUL, encodings, Unicode look-alikes."""

HOSTILE_IDS: list[str] = [
    "..", ".", "../etc", "../../etc/passwd", "/etc/passwd", "a/b", "a\\b", "w1/../../x",
    "..\\..\\windows", "C:\\Windows", "%2e%2e", "%2e%2e%2fetc", "%252e%252e%252f", "..%2f", "w1%00",
    "w1\x00", "\x00", "ｗ1", "．．", "‥", "∕etc", "⁄etc", "w1\u200b", "w1\n", "w1\r\n", " w1", "w1 ",
    "a" * 65, "~root", "$HOME", "${HOME}", "`id`", "w1;rm -rf", "w1|cat", ".hidden", "ⅰ", "İ",
    "file:///etc/passwd", "w1\t", "\u202ew1",
]
