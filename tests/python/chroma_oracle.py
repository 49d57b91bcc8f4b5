"""Chroma ``chunking_evaluation`` (``base_evaluation.py``, ``evaluation_utils.py``) precision Ω
restated in plain Python, range helpers included, as an oracle for the plugin's
``compat="chroma"``: a question's golden spans (one document) against every chunk of a chunking."""

from __future__ import annotations

from typing import Optional


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort by start (stable), merge a range that starts at or before the previous end."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges, key=lambda r: r[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _intersect(a: tuple[int, int], b: tuple[int, int]) -> Optional[tuple[int, int]]:
    """Touching ranges meet in an empty range; disjoint ones in none."""
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return (start, end) if start <= end else None


def _difference(ranges: list[tuple[int, int]], target: tuple[int, int]) -> list[tuple[int, int]]:
    out = []
    t_start, t_end = target
    for start, end in ranges:
        if end < t_start or start > t_end:
            out.append((start, end))
        elif start < t_start and end > t_end:
            out += [(start, t_start), (t_end, end)]
        elif start < t_start:
            out.append((start, t_start))
        elif end > t_end:
            out.append((t_end, end))
    return out


def precision_omega(chunks: list[tuple[int, int]], golden: list[tuple[int, int]]) -> float:
    """``_full_precision_score`` of one question whose golden spans and chunks share a document;
    raises where Chroma raises (golden spans without characters, or none)."""
    numerator: list[tuple[int, int]] = []
    touching: list[tuple[int, int]] = []
    unused = list(golden)
    for chunk in chunks:
        for ref in golden:
            hit = _intersect(chunk, ref)
            if hit is not None:
                unused = _difference(unused, hit)
                numerator = _union([hit] + numerator)
                touching = _union([chunk] + touching)
    denominator = _union(touching + unused)
    if not denominator:
        raise IndexError("list index out of range")  # Chroma's union_ranges of an empty list
    ioc = 0.0
    if numerator:
        ioc = sum(e - s for s, e in numerator) / sum(e - s for s, e in denominator)
    # The same loop computes a recall it does not return, dividing by the golden spans' length:
    # a ZeroDivisionError when they have no characters.
    _recall = 1 - sum(e - s for s, e in unused) / sum(e - s for s, e in golden)
    return ioc
