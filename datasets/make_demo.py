"""Writes the bundled demo (datasets/demo/*.parquet) from the chroma-general golden dataset.

Deterministic: the same inputs always give byte-identical tables. Run from the repository root
with the shared data beside it:

    .venv/bin/python datasets/make_demo.py [path/to/chroma-general]

Tables written (offsets are Unicode code points, end exclusive):

* corpus.parquet: file, text
* golden.parquet: query_id, query, reference_answers, relevant_spans, relevant_chunks, segment,
  checks (list[struct{kind, value, values, weight, name}]), negative_answers (list[str]: the next
  question's reference answer, a plausible wrong answer)
* run_a.parquet, run_b.parquet: query_id, answer, sources (list[str]), retrieved
  (list[struct{file, start, end, text, id, score}])

Answers quote their sources in several ways, so the citation metrics have something to find:
exact quotes in curly or straight quotation marks, quotes with a small edit, quotes the sources
do not contain, answers with apostrophes but no quotes, and answers with no quotes at all.
run_b is a weaker system than run_a: it edits and invents quotes more often.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent
FILES = ["state_of_the_union.md", "chatlogs.md"]
QUESTIONS_PER_FILE = {"state_of_the_union.md": 18, "chatlogs.md": 6}
WINDOW = 600  # characters of context retrieved around a golden span

INVENTED = [
    "we will put a research station on the Moon before the end of this decade",
    "every family will receive a free electric car next spring",
    "the national debt was fully repaid last year",
    "the model was trained on every book ever written",
]
EDITS = [("the", "a"), ("and", "or"), ("to", "into"), ("of", "for"), ("is", "was")]


def quote_fragment(rng: random.Random, content: str) -> str:
    words = content.split()
    if len(words) <= 8:
        return " ".join(words)
    n = rng.randint(5, min(12, len(words)))
    start = rng.randint(0, len(words) - n)
    return " ".join(words[start : start + n])


def edited(fragment: str) -> str:
    words = fragment.split()
    for old, new in EDITS:
        if old in words:
            words[words.index(old)] = new
            return " ".join(words)
    return " ".join(words[:-1] + ["indeed"])


def answer_for(rng: random.Random, kind: str, content: str) -> str:
    frag = quote_fragment(rng, content)
    if kind == "curly":
        return f"According to the source, “{frag}”. That is the key point."
    if kind == "straight":
        return f'The document states: "{frag}" and it goes on from there.'
    if kind == "guillemets":
        return f"Il est écrit : « {frag} »."
    if kind == "edited":
        return f"The text says “{edited(frag)}”, which answers the question."
    if kind == "invented":
        return f"It’s clear: “{frag}”, and also “{rng.choice(INVENTED)}”."
    if kind == "apostrophes":
        return f"It's what the speaker's team didn't say: {frag.lower()}."
    return f"In short, {frag.lower()}."


def checks_for(content: str, invented: str) -> list[dict]:
    """Declarative checks of a golden answer: its opening words, its first number if any, and
    that it does not claim an invented fact."""
    check = lambda kind, value, weight, name: {  # noqa: E731
        "kind": kind, "value": value, "values": None, "weight": weight, "name": name
    }
    words = content.split()
    checks = [check("contains", " ".join(words[:4]), 1.0, "opening words")]
    number = next((w.strip(".,;:()") for w in words if any(c.isdigit() for c in w)), None)
    if number:
        checks.append(check("number", number, 2.0, "figure"))
    checks.append(check("not_contains", invented, 1.0, "no invented claim"))
    return checks


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent.parent / "shared/datasets/chroma-general"
    texts = {f: (src / "corpora" / f).read_text(encoding="utf-8") for f in FILES}
    questions = pl.read_csv(src / "questions_df.csv")

    golden_rows, runs = [], {"run_a": [], "run_b": []}
    kinds = {
        "run_a": ["curly", "curly", "straight", "guillemets", "edited", "apostrophes", "plain", "curly"],
        "run_b": ["curly", "edited", "edited", "invented", "invented", "apostrophes", "plain", "straight"],
    }
    qid = 0
    for file in FILES:
        rows = questions.filter(pl.col("corpus_id") == file.removesuffix(".md")).head(QUESTIONS_PER_FILE[file])
        text = texts[file]
        for row in rows.iter_rows(named=True):
            qid += 1
            refs = json.loads(row["references"])
            spans = [{"file": file, "start": r["start_index"], "end": r["end_index"]} for r in refs]
            for r in refs:
                assert text[r["start_index"] : r["end_index"]] == r["content"], "offsets are code points"
            query_id = f"q{qid:03d}"
            golden_rows.append(
                {
                    "query_id": query_id,
                    "query": row["question"],
                    "reference_answers": [" ".join(r["content"] for r in refs)],
                    "relevant_spans": spans,
                    "relevant_chunks": [r["content"] for r in refs],
                    "segment": file.removesuffix(".md"),
                    "checks": checks_for(refs[0]["content"], INVENTED[qid % len(INVENTED)]),
                }
            )
            for run, run_kinds in kinds.items():
                rng = random.Random(f"{run}-{query_id}")
                retrieved = []
                for rank, r in enumerate(refs[:2]):
                    start = max(0, r["start_index"] - rng.randint(0, WINDOW // 2))
                    end = min(len(text), start + WINDOW)
                    retrieved.append((start, end))
                # one unrelated window, as real retrievers return
                other = rng.randint(0, len(text) - WINDOW)
                retrieved.append((other, other + WINDOW))
                items = [
                    {
                        "file": file,
                        "start": s,
                        "end": e,
                        "text": text[s:e],
                        "id": f"{file}:{s}-{e}",
                        "score": round(1.0 - 0.1 * i - rng.random() * 0.05, 4),
                    }
                    for i, (s, e) in enumerate(retrieved)
                ]
                kind = run_kinds[(qid - 1) % len(run_kinds)]
                content = refs[0]["content"]
                runs[run].append(
                    {
                        "query_id": query_id,
                        "answer": answer_for(rng, kind, content),
                        "sources": [it["text"] for it in items],
                        "retrieved": items,
                        "answer_kind": kind,
                    }
                )

    # A plausible wrong answer to each question: the reference answer of the next question.
    for i, row in enumerate(golden_rows):
        row["negative_answers"] = golden_rows[(i + 1) % len(golden_rows)]["reference_answers"]

    out = ROOT / "demo"
    out.mkdir(exist_ok=True)
    pl.DataFrame({"file": FILES, "text": [texts[f] for f in FILES]}).write_parquet(out / "corpus.parquet")
    pl.DataFrame(golden_rows).write_parquet(out / "golden.parquet")
    for run, rows in runs.items():
        # run_b misses one query, so joins have an unmatched golden row to report
        if run == "run_b":
            rows = rows[:-1]
        pl.DataFrame(rows).write_parquet(out / f"{run}.parquet")
    print(f"wrote {out}: {len(golden_rows)} golden rows, runs of {len(runs['run_a'])} and {len(runs['run_b']) - 1} rows")


if __name__ == "__main__":
    main()
