"""Writes the citation-support meta-evaluation set (datasets/judge-eval/citation_support.parquet)
from the chroma-general golden spans, with labels true by construction.

Deterministic: the same inputs always give a byte-identical table. Run from the repository root
with the shared data beside it:

    .venv/bin/python datasets/make_judge_eval.py [path/to/chroma-general]

Each row is a claim and the golden span cited for it (`cited_span`), labelled as the citation card
grades it:

* `verbatim`: a sentence of the span, as it stands: fully_supported;
* `added_clause`: that sentence with a clause the span does not state: partially_supported;
* `changed_number`: the sentence with one of its numbers changed: not_supported;
* `negated`: the sentence with its verb negated: not_supported;
* `other_document`: a sentence of a span from another document: not_supported.

Columns: item_id, claim, cited_span, label, construction, corpus_id.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "datasets" / "judge-eval" / "citation_support.parquet"
CLAUSES = [
    ", a figure that doubled the following year",
    ", which the committee later voted to reverse",
    ", and the plan was first proposed in 1987",
    ", according to a survey of 2,000 households",
]
NEGATABLE = re.compile(r"\b(is|are|was|were|has|have|will|can)\b")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return [p for p in parts if 6 <= len(p.split()) <= 45 and p[-1:] in ".!?"]


def changed_number(sentence: str, rng: random.Random) -> str | None:
    match = NUMBER.search(sentence)
    if match is None:
        return None
    digits = match.group().replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    new = str(int(value) + rng.randint(2, 9)) if value.is_integer() else f"{value * 2:g}"
    return sentence[: match.start()] + new + sentence[match.end() :]


def negated(sentence: str) -> str | None:
    match = NEGATABLE.search(sentence)
    if match is None:
        return None
    return sentence[: match.end()] + " not" + sentence[match.end() :]


def main(source: Path) -> None:
    questions = pl.read_csv(source / "questions_df.csv")
    spans: list[tuple[str, str]] = []
    for row in questions.iter_rows(named=True):
        for ref in json.loads(row["references"]):
            spans.append((row["corpus_id"], ref["content"]))
    rng = random.Random(20261125)
    rows = []
    constructions = ["verbatim", "added_clause", "changed_number", "negated", "other_document"]
    for corpus, span in spans:
        candidates = sentences(span)
        if not candidates:
            continue
        sentence = rng.choice(candidates)
        kind = constructions[len(rows) % len(constructions)]
        claim: str | None
        if kind == "verbatim":
            claim, label = sentence, "fully_supported"
        elif kind == "added_clause":
            claim, label = sentence[:-1] + rng.choice(CLAUSES) + sentence[-1], "partially_supported"
        elif kind == "changed_number":
            claim, label = changed_number(sentence, rng), "not_supported"
        elif kind == "negated":
            claim, label = negated(sentence), "not_supported"
        else:
            others = [s for c, s in spans if c != corpus and sentences(s)]
            claim, label = rng.choice(sentences(rng.choice(others))), "not_supported"
        # A construction that changed nothing the span states is left out.
        if claim is None or (kind != "verbatim" and claim in span):
            continue
        rows.append(
            {"item_id": f"cs{len(rows):04d}", "claim": claim, "cited_span": span, "label": label,
             "construction": kind, "corpus_id": corpus}
        )
        if len(rows) == 250:
            break
    OUT.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(rows).write_parquet(OUT, statistics=False)
    print(f"{OUT}: {len(rows)} rows", pl.DataFrame(rows)["construction"].value_counts(sort=True).rows())


if __name__ == "__main__":
    default = ROOT.parent / "shared" / "datasets" / "chroma-general"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
