"""Generated answer/reference pairs shared by the answer-metric tests: varied words, punctuation,
numbers, accents and CJK, hypotheses that share material with their references so scores cover
the whole range. Deterministic for a given seed."""

from __future__ import annotations

import random

WORDS = (
    "the a cat dog sat ran on in over mat park house tree river quickly slowly big small "
    "running runs runner jumped jumps happily Paris France 2023 3.14 1,000 $604 -0.133% "
    "e-mail it's don't U.S. café naïve über 東京 北京 大学 , . ! ? ; : ( ) \" ' -"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def pairs(n: int, seed: int = 5) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ref = sentence(rng, rng.randint(0, 25))
        kept = [w for w in ref.split() if rng.random() < 0.7]
        kept += [rng.choice(WORDS) for _ in range(rng.randint(0, 5))]
        if rng.random() < 0.3:
            rng.shuffle(kept)
        out.append((" ".join(kept), ref))
    return out


def close(a, b, tol: float = 1e-12) -> bool:
    """Both null, or both numbers within `tol`."""
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= tol)
