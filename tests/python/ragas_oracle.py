"""Ragas 0.4.3 ``quoted_spans_alignment`` restated in plain Python (its regex, ``str.split``,
``str.strip`` and ``str.lower``), used as an oracle for property tests of the plugin. The recorded
reference vectors remain the authority; this restatement lets hypothesis explore further."""

from __future__ import annotations

import re
from typing import Sequence

_QUOTE_RE = re.compile("[\"'`\u00b4](.*?)[\"'`\u00b4]")


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def spans(answer: str, min_len: int) -> list[str]:
    out = []
    for m in _QUOTE_RE.finditer(answer):
        span = (m.group(1) or "").strip()
        if len(span.split()) >= min_len:
            out.append(span)
    return out


def counts(answer: str, sources: Sequence[str], casefold: bool, min_len: int) -> tuple[int, int]:
    found = spans(answer, min_len)
    joined = " ".join(sources)
    hay = _normalize(joined) if casefold else joined
    matched = 0
    for span in found:
        needle = _normalize(span) if casefold else span
        matched += bool(needle and needle in hay)
    return matched, len(found)
