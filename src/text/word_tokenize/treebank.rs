//! `NLTKWordTokenizer`: the Treebank substitutions with NLTK's quote, dash and ellipsis
//! additions, each a hand-written scan, then the final split at spaces.

use super::*;

/// Two strings that the substitution passes read from and write to in turn.
#[derive(Default)]
pub(super) struct RewriteBuffers {
    pub(super) text: String,
    pub(super) spare: String,
}

impl RewriteBuffers {
    /// Runs one substitution pass; `pass` writes its output and returns true, or returns false
    /// (writing nothing) when nothing in the text matches.
    fn apply(&mut self, pass: impl FnOnce(&str, &mut String) -> bool) {
        self.spare.clear();
        if pass(&self.text, &mut self.spare) {
            std::mem::swap(&mut self.text, &mut self.spare);
        }
    }
}

pub(super) fn push_padded(out: &mut String, s: &str) {
    out.push(' ');
    out.push_str(s);
    out.push(' ');
}

/// Surrounds every ASCII character for which `pad` holds with spaces.
pub(super) fn pad_ascii(text: &str, out: &mut String, pad: impl Fn(u8) -> bool) -> bool {
    let mut copied = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if pad(b) {
            out.push_str(&text[copied..i]);
            push_padded(out, &text[i..=i]);
            copied = i + 1;
        }
    }
    finish(text, out, copied)
}

/// Surrounds every character for which `pad` holds with spaces.
pub(super) fn pad_chars(text: &str, out: &mut String, pad: impl Fn(char) -> bool) -> bool {
    let mut copied = 0;
    for (i, c) in text.char_indices() {
        if pad(c) {
            out.push_str(&text[copied..i]);
            push_padded(out, &text[i..i + c.len_utf8()]);
            copied = i + c.len_utf8();
        }
    }
    finish(text, out, copied)
}

/// Ends a pass that copied `text` up to `copied` into `out`: copies the rest when something was
/// replaced (every replacement ends past offset 0), and reports whether anything was.
pub(super) fn finish(text: &str, out: &mut String, copied: usize) -> bool {
    if copied == 0 {
        return false;
    }
    out.push_str(&text[copied..]);
    true
}

/// Start offsets of the non-overlapping occurrences of the two ASCII bytes `pair`, left to
/// right (a searcher built per call costs more than the short texts here take to scan).
pub(super) fn pair_offsets(text: &str, pair: [u8; 2]) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(offset) = memchr::memchr(pair[0], bytes.get(from..)?) {
            let at = from + offset;
            if bytes.get(at + 1) == Some(&pair[1]) {
                from = at + 2;
                return Some(at);
            }
            from = at + 1;
        }
        from = bytes.len() + 1;
        None
    })
}

/// Surrounds every maximal run of at least `min_len` bytes equal to `b` with spaces.
pub(super) fn pad_runs(text: &str, out: &mut String, b: u8, min_len: usize) -> bool {
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b, &bytes[i..]) {
        let start = i + offset;
        let run = bytes[start..].iter().take_while(|&&x| x == b).count();
        if run >= min_len {
            out.push_str(&text[copied..start]);
            push_padded(out, &text[start..start + run]);
            copied = start + run;
        }
        i = start + run;
    }
    finish(text, out, copied)
}

/// Non-overlapping replacement of a two-character ASCII literal, left to right.
pub(super) fn replace_pair(text: &str, out: &mut String, from: [u8; 2], to: &str) -> bool {
    let mut copied = 0;
    for i in pair_offsets(text, from) {
        out.push_str(&text[copied..i]);
        out.push_str(to);
        copied = i + 2;
    }
    finish(text, out, copied)
}

/// `([ \(\[{<])(\"|\'{2})` → `\1 `` `
pub(super) fn opening_double_quotes(text: &str, out: &mut String) -> bool {
    let bytes = text.as_bytes();
    if memchr::memchr2(b'"', b'\'', bytes).is_none() {
        return false;
    }
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if matches!(bytes[i], b' ' | b'(' | b'[' | b'{' | b'<') {
            let quote_len = match &bytes[i + 1..] {
                [b'"', ..] => 1,
                [b'\'', b'\'', ..] => 2,
                _ => 0,
            };
            if quote_len > 0 {
                out.push_str(&text[copied..=i]);
                out.push_str(" `` ");
                i += 1 + quote_len;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    finish(text, out, copied)
}

/// ASCII-case-insensitive prefix match of `pattern` (ASCII) at the start of `s`, where, as in
/// Python's case-insensitive matching, `s` also matches `ſ` (and, with `dotless_i`, `i` also
/// matches `ı` and `İ`). Returns the byte length matched.
pub(super) fn caseless_prefix(s: &str, pattern: &str, dotless_i: bool) -> Option<usize> {
    let mut len = 0;
    let mut chars = s.chars();
    for p in pattern.chars() {
        let c = chars.next()?;
        let same = c.to_ascii_lowercase() == p
            || (p == 's' && c == 'ſ')
            || (dotless_i && p == 'i' && (c == 'ı' || c == 'İ'));
        if !same {
            return None;
        }
        len += c.len_utf8();
    }
    Some(len)
}

/// `(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)` → `\1 `: an opening single quote before
/// a word is split from it, unless what follows is a clitic.
pub(super) fn opening_single_quotes(text: &str, out: &mut String) -> bool {
    let mut copied = 0;
    for i in memchr::memchr_iter(b'\'', text.as_bytes()) {
        if char_before(text, i).is_some_and(is_regex_word) {
            continue;
        }
        let rest = &text[i + 1..];
        if !rest.chars().next().is_some_and(is_regex_word) {
            continue;
        }
        let clitic = ["re", "ve", "ll", "m", "t", "s", "d", "n"]
            .iter()
            .any(|clitic| match caseless_prefix(rest, clitic, false) {
                Some(len) => !char_at(rest, len).is_some_and(is_regex_word),
                None => false,
            });
        if clitic {
            continue;
        }
        out.push_str(&text[copied..=i]);
        out.push(' ');
        copied = i + 1;
    }
    finish(text, out, copied)
}

/// The final period, `([^\.])(\.)([closers]*)\s*$` → `\1 \2{separator}\3 `. Only the last
/// period of the text can match, since anything after it must be closers and whitespace.
pub(super) fn final_period(
    text: &str,
    out: &mut String,
    is_closer: impl Fn(char) -> bool,
    separator: &str,
) -> bool {
    let Some(p) = text.rfind('.') else {
        return false;
    };
    if char_before(text, p).is_none_or(|c| c == '.') {
        return false;
    }
    let rest = &text[p + 1..];
    let closers_len = rest.find(|c: char| !is_closer(c)).unwrap_or(rest.len());
    if !rest[closers_len..].chars().all(is_regex_space) {
        return false;
    }
    out.push_str(&text[..p]);
    out.push_str(" .");
    out.push_str(separator);
    out.push_str(&rest[..closers_len]);
    out.push(' ');
    true
}

/// `([:,])([^\d])` → ` \1 \2`
pub(super) fn colons_and_commas(text: &str, out: &mut String) -> bool {
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while let Some(offset) = memchr::memchr2(b':', b',', &bytes[i..]) {
        let at = i + offset;
        match char_at(text, at + 1) {
            Some(next) if !is_decimal_digit(next) => {
                out.push_str(&text[copied..at]);
                push_padded(out, &text[at..=at]);
                out.push(next);
                copied = at + 1 + next.len_utf8();
                i = copied;
            }
            _ => i = at + 1,
        }
    }
    finish(text, out, copied)
}

/// `([:,])$` → ` \1 ` (`$` also matches before a final newline).
pub(super) fn final_colon_or_comma(text: &str, out: &mut String) -> bool {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let at = if text.ends_with([':', ',']) {
        text.len() - 1
    } else if body.len() < text.len() && body.ends_with([':', ',']) {
        body.len() - 1
    } else {
        return false;
    };
    out.push_str(&text[..at]);
    push_padded(out, &text[at..=at]);
    out.push_str(&text[at + 1..]);
    true
}

/// `([^'])' ` → `\1 ' `
pub(super) fn closing_single_quotes(text: &str, out: &mut String) -> bool {
    let mut copied = 0;
    for at in pair_offsets(text, *b"' ") {
        match char_before(text, at) {
            // The character before must not lie inside the previous match.
            Some(c) if c != '\'' && at - c.len_utf8() >= copied => {
                out.push_str(&text[copied..at]);
                out.push_str(" ' ");
                copied = at + 2;
            }
            _ => {}
        }
    }
    finish(text, out, copied)
}

/// `([^' ])(clitic) ` → `\1 \2 `, trying the clitics in order. Every clitic has an apostrophe
/// first, or second after `n`/`N`, so the matches are found from the apostrophes.
pub(super) fn split_clitics(text: &str, out: &mut String, clitics: &[&str]) -> bool {
    let bytes = text.as_bytes();
    let mut copied = 0;
    for quote in memchr::memchr_iter(b'\'', bytes) {
        let n_before = quote > 0 && matches!(bytes[quote - 1], b'n' | b'N');
        let starts = [n_before.then(|| quote - 1), Some(quote)];
        for start in starts.into_iter().flatten() {
            let Some(before) = char_before(text, start) else {
                continue;
            };
            // The character before must not lie inside the previous match.
            if before == '\'' || before == ' ' || start - before.len_utf8() < copied {
                continue;
            }
            let rest = &text[start..];
            let clitic = clitics
                .iter()
                .find(|clitic| rest.starts_with(**clitic) && rest[clitic.len()..].starts_with(' '));
            if let Some(clitic) = clitic {
                out.push_str(&text[copied..start]);
                push_padded(out, clitic);
                copied = start + clitic.len() + 1;
                break;
            }
        }
    }
    finish(text, out, copied)
}

/// The MacIntyre contractions `\b(can)(not)\b`, `\b(d)('ye)\b`, `\b(gim)(me)\b`,
/// `\b(gon)(na)\b`, `\b(got)(ta)\b`, `\b(lem)(me)\b`, `\b(more)('n)\b` and `\b(wan)(na)(?=\s)`
/// (case-insensitive, standard `re` word boundaries) → ` \1 \2 `. NLTK applies them one after
/// another; one scan gives the same result because each match is a whole word and the spaces
/// inserted next to it sit beside non-word characters, where boundaries already were.
pub(super) fn macintyre_contractions(text: &str, out: &mut String) -> bool {
    const SPLITS: [(&str, &str); 8] = [
        ("can", "not"),
        ("d", "'ye"),
        ("gim", "me"),
        ("gon", "na"),
        ("got", "ta"),
        ("lem", "me"),
        ("more", "'n"),
        ("wan", "na"),
    ];
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    // Whether the character before `i` in the original text is a word character (`\b`).
    let mut after_word = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b >= 0x80 {
            let c = char_at(text, i).unwrap_or(' ');
            after_word = is_re_word(c);
            i += c.len_utf8();
            continue;
        }
        let is_word = b.is_ascii_alphanumeric() || b == b'_';
        if after_word
            || !matches!(
                b.to_ascii_lowercase(),
                b'c' | b'd' | b'g' | b'l' | b'm' | b'w'
            )
        {
            after_word = is_word;
            i += 1;
            continue;
        }
        // A cheap rejection before the full match: the second character that each first letter
        // needs (`can`, `d'ye`, `gim`/`gon`/`got`, `lem`, `more`, `wan`). A non-ASCII one may be
        // the `ı` or `İ` that `gim` accepts, so it goes to the full match.
        let second = bytes.get(i + 1).copied().unwrap_or(0);
        let plausible = second >= 0x80
            || matches!(
                (b | 0x20, second | 0x20),
                (b'c', b'a')
                    | (b'd', b'\'')
                    | (b'g', b'i' | b'o')
                    | (b'l', b'e')
                    | (b'm', b'o')
                    | (b'w', b'a')
            );
        if !plausible {
            after_word = is_word;
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let matched = SPLITS.iter().enumerate().find_map(|(index, (head, tail))| {
            let head_len = caseless_prefix(rest, head, true)?;
            let end = head_len + caseless_prefix(&rest[head_len..], tail, true)?;
            let after = char_at(rest, end);
            let boundary = if index == SPLITS.len() - 1 {
                after.is_some_and(is_python_space)
            } else {
                !after.is_some_and(is_re_word)
            };
            boundary.then_some((head_len, end))
        });
        match matched {
            Some((head_len, end)) => {
                out.push_str(&text[copied..i]);
                push_padded(out, &rest[..head_len]);
                out.push_str(&rest[head_len..end]);
                out.push(' ');
                copied = i + end;
                i = copied;
                // Every contraction ends with a letter.
                after_word = true;
            }
            None => {
                after_word = is_word;
                i += 1;
            }
        }
    }
    finish(text, out, copied)
}

/// Whether `text` may hold one of the MacIntyre contractions (`cannot`, `d'ye`, `gimme`,
/// `gonna`, `gotta`, `lemme`, `more'n`, `wanna`, in any ASCII case, `gimme` also with `ı` or
/// `İ`), found from their rarer bytes (a doubled `n`, `m` or `t`, or an apostrophe): a cheap
/// filter, since the full scan has to test every word start and most sentences have none.
pub(super) fn may_have_macintyre_contraction(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Whether an apostrophe or a doubled `n`, `m` or `t` (in any case) is at `k`.
    let rare = |k: usize| {
        let a = bytes[k] | 0x20;
        bytes[k] == b'\'' || (a == bytes[k + 1] | 0x20 && matches!(a, b'n' | b'm' | b't'))
    };
    // Eight positions at a time (SWAR), over the bytes at `k..k + 8` and the ones after them;
    // the words around a rare byte are checked only in a block that has one.
    let mut k = 0;
    while let (Some(here), Some(next)) = (word_at(bytes, k), word_at(bytes, k + 1)) {
        let (lower, next_lower) = (here | splat(0x20), next | splat(0x20));
        let doubled = zero_bytes(lower ^ next_lower)
            & (zero_bytes(lower ^ splat(b'n'))
                | zero_bytes(lower ^ splat(b'm'))
                | zero_bytes(lower ^ splat(b't')));
        if (doubled | zero_bytes(here ^ splat(b'\''))) != 0
            && (k..k + 8).any(|i| rare(i) && contraction_around(bytes, i))
        {
            return true;
        }
        k += 8;
    }
    (k..bytes.len().saturating_sub(1)).any(|i| rare(i) && contraction_around(bytes, i))
}

/// The eight bytes at `i..i + 8` as a little-endian word (byte `i` lowest), if there are eight.
pub(super) fn word_at(bytes: &[u8], i: usize) -> Option<u64> {
    let eight = bytes.get(i..i.checked_add(8)?)?;
    <[u8; 8]>::try_from(eight).ok().map(u64::from_le_bytes)
}

/// `b` in every byte of a word.
pub(super) const fn splat(b: u8) -> u64 {
    b as u64 * 0x0101_0101_0101_0101
}

/// The high bit of each byte of the result is set exactly where that byte of `v` is zero (no
/// carries cross bytes, so unlike the usual has-zero trick every position is exact).
pub(super) const fn zero_bytes(v: u64) -> u64 {
    const LOW: u64 = splat(0x7f);
    !(((v & LOW) + LOW) | v | LOW)
}

/// Whether a MacIntyre contraction holds the apostrophe or the doubled letter at `k`.
#[inline(never)]
pub(super) fn contraction_around(bytes: &[u8], k: usize) -> bool {
    // Whether `word` occurs with its byte `offset` at `k`.
    let occurs = |word: &[u8], offset: usize| {
        k.checked_sub(offset)
            .and_then(|start| bytes.get(start..start + word.len()))
            .is_some_and(|s| s.eq_ignore_ascii_case(word))
    };
    match bytes[k] | 0x20 {
        b'\'' => occurs(b"d'ye", 1) || occurs(b"more'n", 4),
        b'n' => occurs(b"cannot", 2) || occurs(b"gonna", 2) || occurs(b"wanna", 2),
        // A non-ASCII byte before the `mm` may end the `ı` or `İ` of `gimme`.
        b'm' => occurs(b"gimme", 2) || occurs(b"lemme", 2) || (k > 0 && bytes[k - 1] >= 0x80),
        _ => occurs(b"gotta", 2),
    }
}

/// ` ('t)(word)\b` → ` \1 \2 ` (case-insensitive), for `'tis` and `'twas`.
pub(super) fn apostrophe_t(text: &str, out: &mut String, word: &str) -> bool {
    let bytes = text.as_bytes();
    let mut copied = 0;
    for quote in memchr::memchr_iter(b'\'', bytes) {
        if quote == 0 || bytes[quote - 1] != b' ' || quote - 1 < copied {
            continue;
        }
        let rest = &text[quote + 1..];
        let Some(t_len) = caseless_prefix(rest, "t", true) else {
            continue;
        };
        let Some(word_len) = caseless_prefix(&rest[t_len..], word, true) else {
            continue;
        };
        let end = quote + 1 + t_len + word_len;
        if char_at(text, end).is_some_and(is_re_word) {
            continue;
        }
        out.push_str(&text[copied..quote - 1]);
        push_padded(out, &text[quote..quote + 1 + t_len]);
        out.push_str(&text[quote + 1 + t_len..end]);
        out.push(' ');
        copied = end;
    }
    finish(text, out, copied)
}

/// Collapses every run of whitespace to one space (`\s+` → ` `).
pub(super) fn collapse_whitespace(text: &str, out: &mut String) -> bool {
    if text.is_ascii() {
        return collapse_ascii_whitespace(text, out);
    }
    let bytes = text.as_bytes();
    // Byte length of the character at `i` (a character boundary), and whether it is whitespace.
    let char_at_i = |i: usize| match bytes[i] {
        b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' => (1, true),
        b if b < 0x80 => (1, false),
        _ => char_at(text, i).map_or((1, false), |c| (c.len_utf8(), c.is_whitespace())),
    };
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let (len, space) = char_at_i(i);
        let start = i;
        i += len;
        if !space {
            continue;
        }
        while i < bytes.len() {
            let (len, space) = char_at_i(i);
            if !space {
                break;
            }
            i += len;
        }
        if &text[start..i] != " " {
            out.push_str(&text[copied..start]);
            out.push(' ');
            copied = i;
        }
    }
    finish(text, out, copied)
}

/// [`collapse_whitespace`] for ASCII text, where `\s` is ` `, `\t`, `\n`, `\x0b`, `\x0c`
/// and `\r` (bytes 9 to 13 and 32). The padding passes leave many double spaces, so this runs
/// on nearly every sentence.
pub(super) fn collapse_ascii_whitespace(text: &str, out: &mut String) -> bool {
    let is_space = |b: u8| b == b' ' || (b'\t'..=b'\r').contains(&b);
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Every whitespace byte is at most b' ', which skips the letters with one comparison.
        if bytes[i] > b' ' || !is_space(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < bytes.len() && is_space(bytes[i]) {
            i += 1;
        }
        if i - start > 1 || bytes[start] != b' ' {
            out.push_str(&text[copied..start]);
            out.push(' ');
            copied = i;
        }
    }
    finish(text, out, copied)
}

/// Closing quotes and brackets of the final-period rule that comes first (it also takes
/// curly quotes, guillemets and spaces).
pub(super) fn is_first_final_period_closer(c: char) -> bool {
    matches!(
        c,
        ']' | ')' | '}' | '>' | '"' | '\'' | '\u{bb}' | '\u{201d}' | '\u{2019}' | ' '
    )
}

pub(super) fn is_second_final_period_closer(c: char) -> bool {
    matches!(c, ']' | ')' | '}' | '>' | '"' | '\'')
}

/// Groups of bytes whose presence in a sentence decides which passes can fire (one bit each).
pub(super) mod trigger {
    pub(crate) const DOUBLE_QUOTE: u32 = 1 << 0;
    pub(crate) const BACKTICK: u32 = 1 << 1;
    pub(crate) const APOSTROPHE: u32 = 1 << 2;
    pub(crate) const PERIOD: u32 = 1 << 3;
    pub(crate) const COLON_OR_COMMA: u32 = 1 << 4;
    /// `;@#$%&`
    pub(crate) const SYMBOL: u32 = 1 << 5;
    pub(crate) const QUESTION_OR_EXCLAMATION: u32 = 1 << 6;
    pub(crate) const ASTERISK: u32 = 1 << 7;
    /// `[](){}<>`
    pub(crate) const BRACKET: u32 = 1 << 8;
    pub(crate) const HYPHEN: u32 = 1 << 9;
    pub(crate) const NEWLINE: u32 = 1 << 10;
    /// `\t`, `\x0b`, `\x0c`, `\r`: the ASCII whitespace other than space and newline.
    pub(crate) const OTHER_CONTROL_SPACE: u32 = 1 << 11;
    /// U+001C..U+001F, which `str.split` also splits on.
    pub(crate) const INFORMATION_SEPARATOR: u32 = 1 << 12;
    pub(crate) const NON_ASCII: u32 = 1 << 13;

    /// The group of every byte value.
    pub(crate) const OF_BYTE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut b = 0;
        while b < 256 {
            table[b] = match b as u8 {
                b'"' => DOUBLE_QUOTE,
                b'`' => BACKTICK,
                b'\'' => APOSTROPHE,
                b'.' => PERIOD,
                b':' | b',' => COLON_OR_COMMA,
                b';' | b'@' | b'#' | b'$' | b'%' | b'&' => SYMBOL,
                b'?' | b'!' => QUESTION_OR_EXCLAMATION,
                b'*' => ASTERISK,
                b'[' | b']' | b'(' | b')' | b'{' | b'}' | b'<' | b'>' => BRACKET,
                b'-' => HYPHEN,
                b'\n' => NEWLINE,
                b'\t' | b'\x0b' | b'\x0c' | b'\r' => OTHER_CONTROL_SPACE,
                0x1c..=0x1f => INFORMATION_SEPARATOR,
                0x80..=0xff => NON_ASCII,
                _ => 0,
            };
            b += 1;
        }
        table
    };

    /// The groups present in `text`: one table lookup and one `or` per byte.
    pub fn present(text: &str) -> u32 {
        text.bytes()
            .fold(0, |groups, b| groups | OF_BYTE[usize::from(b)])
    }
}

/// `NLTKWordTokenizer.tokenize` on one sentence.
pub(super) fn tokenize_sentence(
    sentence: &str,
    buffers: &mut RewriteBuffers,
    f: &mut impl FnMut(&str),
) {
    buffers.text.clear();
    buffers.text.push_str(sentence);
    // The passes only ever insert ASCII, so rules about non-ASCII characters can be skipped for
    // ASCII sentences.
    //
    // Most passes can only fire where one of a few ASCII characters occurs, and typical prose
    // has none of most of them, so a pass is skipped when none of its trigger characters is in
    // the sentence (found in one scan up front). The passes insert only spaces and characters
    // that are already there, except that a `"` becomes `` ` `` or `''` (so both count as
    // present whenever `"` is) and an opening `''` becomes `` ` `` (which no later pass looks
    // for). Skipping is therefore only ever done when the pass would find nothing.
    use trigger::*;
    let mut present = trigger::present(sentence);
    let ascii = present & NON_ASCII == 0;
    if present & DOUBLE_QUOTE != 0 {
        present |= BACKTICK | APOSTROPHE;
    }
    let has = |groups: u32| present & groups != 0;

    // Starting quotes.
    if !ascii || has(BACKTICK) {
        buffers.apply(|t, o| {
            if ascii {
                return pad_runs(t, o, b'`', 1);
            }
            let mut copied = 0;
            let mut i = 0;
            while let Some(c) = char_at(t, i) {
                let len = if c == '`' {
                    t[i..].bytes().take_while(|&b| b == b'`').count()
                } else if matches!(c, '«' | '“' | '‘' | '„') {
                    c.len_utf8()
                } else {
                    i += c.len_utf8();
                    continue;
                };
                o.push_str(&t[copied..i]);
                push_padded(o, &t[i..i + len]);
                i += len;
                copied = i;
            }
            finish(t, o, copied)
        });
    }
    if has(DOUBLE_QUOTE) {
        buffers.apply(|t, o| match t.strip_prefix('"') {
            Some(rest) => {
                o.push_str("``");
                o.push_str(rest);
                true
            }
            None => false,
        });
    }
    if has(BACKTICK) {
        buffers.apply(|t, o| replace_pair(t, o, *b"``", " `` "));
    }
    if has(DOUBLE_QUOTE | APOSTROPHE) {
        buffers.apply(opening_double_quotes);
        buffers.apply(opening_single_quotes);
    }

    // Punctuation.
    let period = has(PERIOD);
    if period {
        buffers.apply(|t, o| final_period(t, o, is_first_final_period_closer, " "));
    }
    if has(COLON_OR_COMMA) {
        buffers.apply(colons_and_commas);
        buffers.apply(final_colon_or_comma);
    }
    if period {
        buffers.apply(|t, o| pad_runs(t, o, b'.', 2));
    }
    if has(SYMBOL) {
        buffers.apply(|t, o| {
            pad_ascii(t, o, |b| {
                matches!(b, b';' | b'@' | b'#' | b'$' | b'%' | b'&')
            })
        });
    }
    if !ascii {
        buffers.apply(|t, o| pad_chars(t, o, |c| ('\u{2012}'..='\u{2015}').contains(&c)));
    }
    if period {
        buffers.apply(|t, o| final_period(t, o, is_second_final_period_closer, ""));
    }
    if has(QUESTION_OR_EXCLAMATION) {
        buffers.apply(|t, o| pad_ascii(t, o, |b| b == b'?' || b == b'!'));
    }
    let apostrophe = has(APOSTROPHE);
    if apostrophe {
        buffers.apply(closing_single_quotes);
    }
    if has(ASTERISK) {
        buffers.apply(|t, o| pad_ascii(t, o, |b| b == b'*'));
    }

    // Brackets and double dashes.
    if has(BRACKET) {
        buffers.apply(|t, o| {
            pad_ascii(t, o, |b| {
                matches!(b, b'[' | b']' | b'(' | b')' | b'{' | b'}' | b'<' | b'>')
            })
        });
    }
    if has(HYPHEN) {
        buffers.apply(|t, o| replace_pair(t, o, *b"--", " -- "));
    }

    // Ending quotes, with a space at both ends so that the clitic rules see one.
    buffers.apply(|t, o| {
        push_padded(o, t);
        true
    });
    if !ascii {
        buffers.apply(|t, o| pad_chars(t, o, |c| matches!(c, '»' | '”' | '’')));
    }
    if apostrophe {
        buffers.apply(|t, o| replace_pair(t, o, *b"''", " '' "));
    }
    if has(DOUBLE_QUOTE) {
        buffers.apply(|t, o| {
            let mut copied = 0;
            for i in memchr::memchr_iter(b'"', t.as_bytes()) {
                o.push_str(&t[copied..i]);
                o.push_str(" '' ");
                copied = i + 1;
            }
            finish(t, o, copied)
        });
    }
    // Without an apostrophe the clitic and `'tis` rules cannot fire, and the MacIntyre rules
    // match the same words whether or not whitespace runs are collapsed (they look only at word
    // boundaries and at whether whitespace follows, which collapsing preserves); so for ASCII
    // text the collapse is left out and the split below breaks at every whitespace byte.
    let collapse = !ascii || apostrophe;
    if collapse {
        buffers.apply(collapse_whitespace);
    }
    if apostrophe {
        buffers.apply(|t, o| split_clitics(t, o, &["'s", "'S", "'m", "'M", "'d", "'D", "'"]));
        buffers.apply(|t, o| {
            split_clitics(
                t,
                o,
                &["'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T"],
            )
        });
    }

    // Contractions.
    if may_have_macintyre_contraction(&buffers.text) {
        buffers.apply(macintyre_contractions);
    }
    if apostrophe {
        buffers.apply(|t, o| apostrophe_t(t, o, "is"));
        buffers.apply(|t, o| apostrophe_t(t, o, "was"));
    }

    // `str.split()`: after the collapse every whitespace character is an ASCII space; without
    // it (ASCII text) it is one of the bytes 9 to 13 or a space. Python also splits on the
    // separators U+001C..U+001F.
    let text = &buffers.text;
    if !has(INFORMATION_SEPARATOR) && (collapse || !has(OTHER_CONTROL_SPACE)) {
        split_at_spaces(text, !collapse && has(NEWLINE), f);
        return;
    }
    let mut start = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        let separator =
            b == b' ' || (0x1c..=0x1f).contains(&b) || (!collapse && (9..=13).contains(&b));
        if separator {
            if start < i {
                f(&text[start..i]);
            }
            start = i + 1;
        }
    }
    if start < text.len() {
        f(&text[start..]);
    }
}

/// Calls `f` with the non-empty pieces of `text` between spaces (and newlines, with `newline`),
/// finding them eight bytes at a time (a byte-by-byte loop mispredicts a branch at nearly every
/// token).
pub(super) fn split_at_spaces(text: &str, newline: bool, f: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut emit = |space: usize| {
        if start < space {
            f(&text[start..space]);
        }
        start = space + 1;
    };
    let mut k = 0;
    while let Some(word) = word_at(bytes, k) {
        let mut spaces = zero_bytes(word ^ splat(b' '));
        if newline {
            spaces |= zero_bytes(word ^ splat(b'\n'));
        }
        while spaces != 0 {
            emit(k + spaces.trailing_zeros() as usize / 8);
            spaces &= spaces - 1;
        }
        k += 8;
    }
    for (i, &b) in bytes.iter().enumerate().skip(k) {
        if b == b' ' || (newline && b == b'\n') {
            emit(i);
        }
    }
    if start < bytes.len() {
        f(&text[start..]);
    }
}
