"""Deterministic text sets for the embedding checks and benchmarks.

`parity_texts()` is the exactness set (over 1,000 texts): RAG-sized chunks and questions from the
bundled demo corpus (chroma-general prose), short phrases, texts far past the 256-token limit,
non-ASCII scripts, emoji, combining marks, control and zero-width characters, the tokenizer's own
special-token strings, whitespace-only and empty texts.

`speed_texts()` is the throughput set: 10,000 chunks of the corpus of 20 to 250 tokens, as a RAG
index holds them.
"""

from __future__ import annotations

import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

UNICODE_SAMPLES = [
    "Ünïcödé façade naïve coöperate",
    "Straße groß Maß",
    "東京は日本の首都です。人口は約1400万人です。",
    "中文文本检索评估",
    "한국어 문장 임베딩",
    "Привет, мир! Это тест.",
    "مرحبا بالعالم، هذا اختبار",
    "שלום עולם",
    "नमस्ते दुनिया",
    "ΑΒΓ αβγ Ωμέγα",
    "emoji 🚀🔥 rocket 👩‍👩‍👧 family 🇫🇷 flag",
    "e\u0301 combining acute, a\u0308 umlaut",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "tab\there\x0bvertical\x0cform",
    "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ　１２３",
    "ligature ﬁ ﬂ ﬀ",
    "math ∑∫√∞ ≠ ≤ ≥",
    "\u00a0nbsp\u00a0inside\u202fnarrow",
    "control\x01\x02\x7fchars",
    "info\x1cseparators\x1f",
]

EDGE_CASES = [
    "",
    " ",
    "\n\t ",
    "a",
    "🚀",
    "[CLS]",
    "[SEP] [PAD] [MASK] [UNK]",
    "##ing ##s",
    "word " * 300,
    "1234567890 3.14159 1e-10",
    "!!! ??? ... --- ***",
    "https://example.com/path?query=1&x=y#frag",
    "def f(x):\n    return x ** 2  # code",
    "SELECT * FROM chunks WHERE score > 0.5;",
    "A" * 500,
    "supercalifragilisticexpialidocious " * 5,
    "\u3000\u3000leading ideographic spaces",
    "trailing newline\n",
]


def corpus_text() -> str:
    import pyarrow.parquet as pq

    table = pq.read_table(ROOT / "datasets" / "demo" / "corpus.parquet")
    return "\n\n".join(table.column("text").to_pylist())


def questions() -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_table(ROOT / "datasets" / "demo" / "golden.parquet").column("query").to_pylist()


def _window(rng: random.Random, words: list[str], n_words: int) -> str:
    start = rng.randrange(0, max(1, len(words) - n_words))
    return " ".join(words[start : start + n_words])


def parity_texts() -> list[str]:
    rng = random.Random(20261125)
    text = corpus_text()
    words = text.split()
    out: list[str] = []
    out += EDGE_CASES
    out += UNICODE_SAMPLES
    out += questions()
    # RAG-sized chunks (about 15 to 400 tokens), some cut mid-sentence.
    for _ in range(450):
        out.append(_window(rng, words, rng.randint(10, 300)))
    # Short phrases.
    for _ in range(250):
        out.append(_window(rng, words, rng.randint(1, 8)))
    # Far past the 256-token limit: truncation.
    for _ in range(80):
        out.append(_window(rng, words, rng.randint(400, 1500)))
    # Raw character windows (line breaks, markdown, tables as they are in the corpus).
    for _ in range(100):
        start = rng.randrange(0, len(text) - 2000)
        out.append(text[start : start + rng.randint(20, 2000)])
    # Non-ASCII mixed into prose, and case variants (the tokenizer lowercases).
    for i in range(120):
        sample = UNICODE_SAMPLES[i % len(UNICODE_SAMPLES)]
        prose = _window(rng, words, rng.randint(3, 40))
        mixed = f"{prose} {sample} {prose[: rng.randint(0, 60)]}"
        out.append(mixed.upper() if i % 3 == 0 else mixed)
    return out


def speed_texts(n: int = 10_000) -> list[str]:
    """Chunks of about 20 to 250 tokens (about 15 to 190 words of this prose)."""
    rng = random.Random(7)
    words = corpus_text().split()
    return [_window(rng, words, rng.randint(15, 190)) for _ in range(n)]
