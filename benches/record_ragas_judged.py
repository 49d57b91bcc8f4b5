"""Records Ragas 0.4.3's judged collection metrics (faithfulness, answer_relevancy,
context_precision with and without reference, context_recall) on scripted LLM replies, for
the judged-metric replay tests.

    (environment: benches/requirements-ragas.txt)
    python3 -m venv .venv-bench-ragas
    .venv-bench-ragas/bin/pip install -r benches/requirements-ragas.txt
    .venv-bench-ragas/bin/python benches/record_ragas_judged.py

No model and no network: each metric gets a fake InstructorBaseRagasLLM whose agenerate(prompt,
response_model) hands back, call by call, a pre-scripted reply validated into the pydantic model
Ragas asks for (as instructor would), and answer_relevancy gets a fake BaseRagasEmbedding that
returns fixed, explicitly listed vectors per text. Ragas' own ascore() does the rest.

Writes tests/fixtures/judged/ragas-judged.json:
    {"ragas": version,
     "cases": [{"metric", "name", "inputs", ["strictness",] "replies": [{"model", "input", "json"}],
                "llm_calls", ["embeddings": {text: vector}, "embedded_texts": [...],]
                "score" (a float, or "NaN") | "error" ("ExceptionType: message")}]}
"replies" are in call order and all were consumed ("llm_calls" == len(replies)); each reply's
"input" is the input JSON Ragas put into that call's prompt.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import typing as t
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from pydantic import BaseModel  # noqa: E402
from ragas.embeddings.base import BaseRagasEmbedding  # noqa: E402
from ragas.llms.base import InstructorBaseRagasLLM  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "judged" / "ragas-judged.json"

# Marks where BasePrompt.to_string puts the input JSON (ragas/prompt/metrics/base_prompt.py).
INPUT_START = "\nNow perform the same with the following input\ninput: "
INPUT_END = "\nOutput: "


class ScriptError(Exception):
    """The script and Ragas disagree on the calls: a bug in this recorder, never recorded."""


def split_prompt(prompt: str) -> tuple[str, t.Any]:
    """Returns (the prompt with its input JSON replaced by "{input}", that input parsed)."""
    start = prompt.rindex(INPUT_START) + len(INPUT_START)
    end = prompt.rindex(INPUT_END)
    return prompt[:start] + "{input}" + prompt[end:], json.loads(prompt[start:end])


class ScriptedLLM(InstructorBaseRagasLLM):
    """Replies with the scripted (model name, JSON) pairs in order, validated like instructor does."""

    def __init__(self, replies: list[tuple[str, dict]], prompts: dict[str, str]):
        self.replies = list(replies)
        self.prompts = prompts
        self.calls: list[dict] = []

    def generate(self, prompt: str, response_model: type[BaseModel]) -> BaseModel:
        raise ScriptError("the collection metrics are expected to call agenerate only")

    async def agenerate(self, prompt: str, response_model: type[BaseModel]) -> BaseModel:
        name = response_model.__name__
        if len(self.calls) == len(self.replies):
            raise ScriptError(f"Ragas made call {len(self.calls) + 1} ({name}) past the script")
        model, reply = self.replies[len(self.calls)]
        if model != name:
            raise ScriptError(f"call {len(self.calls) + 1}: Ragas asked for {name}, script has {model}")
        template, prompt_input = split_prompt(prompt)
        if self.prompts.setdefault(name, template) != template:
            raise ScriptError(f"{name}: the prompt around the input changed between calls")
        self.calls.append({"model": name, "input": prompt_input, "json": reply})
        return response_model.model_validate_json(json.dumps(reply))


class FixedEmbeddings(BaseRagasEmbedding):
    """Returns the given vector for each text; aembed_texts is Ragas' default (validate, gather)."""

    def __init__(self, vectors: dict[str, list[float]]):
        super().__init__()
        self.vectors = vectors
        self.embedded: list[str] = []

    def embed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        if text not in self.vectors:
            raise ScriptError(f"no vector scripted for {text!r}")
        self.embedded.append(text)
        return list(self.vectors[text])

    async def aembed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        return self.embed_text(text)


# ---------------------------------------------------------------------------------------------
# Scripted replies, one helper per response model.


def statements(*texts: str) -> tuple[str, dict]:
    return "StatementGeneratorOutput", {"statements": list(texts)}


def nli(*judged: tuple[str, int]) -> tuple[str, dict]:
    return "NLIStatementOutput", {
        "statements": [{"statement": s, "reason": "scripted", "verdict": v} for s, v in judged]
    }


def question(text: str, noncommittal: int = 0) -> tuple[str, dict]:
    return "AnswerRelevanceOutput", {"question": text, "noncommittal": noncommittal}


def useful(verdict: int) -> tuple[str, dict]:
    return "ContextPrecisionOutput", {"reason": "scripted", "verdict": verdict}


def attributions(*classified: tuple[str, int]) -> tuple[str, dict]:
    return "ContextRecallOutput", {
        "classifications": [{"statement": s, "reason": "scripted", "attributed": a} for s, a in classified]
    }


# ---------------------------------------------------------------------------------------------
# Cases: (name, inputs, replies[, extra]).

Q = "Where was Albert Einstein born and what is he known for?"
A = "Einstein was born in Germany. He developed the theory of relativity and won a Nobel Prize."
S1 = "Albert Einstein was born in Germany."
S2 = "Albert Einstein developed the theory of relativity."
S3 = "Albert Einstein won a Nobel Prize."
CTX = [
    "Albert Einstein was a German-born theoretical physicist.",
    "He is best known for developing the theory of relativity.",
    "The Eiffel Tower is in Paris.",
    "Einstein received the 1921 Nobel Prize in Physics.",
    "Bananas are rich in potassium.",
]
REF = "Albert Einstein was born in Germany, developed relativity and received the 1921 Nobel Prize."


def faithfulness_cases() -> list[tuple]:
    row = {"user_input": Q, "response": A, "retrieved_contexts": CTX[:2]}
    s7 = [f"Statement number {i}." for i in range(1, 8)]
    return [
        ("all supported", row, [statements(S1, S2, S3), nli((S1, 1), (S2, 1), (S3, 1))]),
        ("none supported", row, [statements(S1, S2), nli((S1, 0), (S2, 0))]),
        ("mixed 2 of 3", row, [statements(S1, S2, S3), nli((S1, 1), (S2, 0), (S3, 1))]),
        ("single statement", row, [statements(S1), nli((S1, 1))]),
        ("seven statements 4 supported", row,
         [statements(*s7), nli(*zip(s7, [1, 1, 0, 1, 0, 0, 1]))]),
        ("zero statements", row, [statements()]),
        ("fewer verdicts than statements", row, [statements(S1, S2, S3), nli((S1, 1), (S2, 0))]),
        ("more verdicts than statements", row,
         [statements(S1, S2), nli((S1, 1), (S2, 1), (S3, 1), ("An extra claim.", 0))]),
        ("empty verdict list", row, [statements(S1, S2), nli()]),
        ("verdicts 2 and -1", row, [statements(S1, S2, S3), nli((S1, 2), (S2, -1), (S3, 0))]),
        ("five contexts joined", {**row, "retrieved_contexts": CTX}, [statements(S1, S3), nli((S1, 1), (S3, 1))]),
        ("one empty context string", {**row, "retrieved_contexts": [""]}, [statements(S1), nli((S1, 0))]),
        ("empty response", {**row, "response": ""}, []),
        ("empty user_input", {**row, "user_input": ""}, []),
        ("no contexts", {**row, "retrieved_contexts": []}, []),
    ]


# Non-normalised 5-dimensional vectors; cosines against the question's vector vary in sign and size.
UQ = "What is the capital of France?"
VECTORS = {
    UQ: [1.0, 2.0, 0.0, 1.0, 0.5],
    "What is the capital city of France?": [0.9, 2.1, 0.1, 1.0, 0.4],
    "Which city is the capital of France?": [2.0, 3.5, -0.5, 2.0, 1.0],
    "Where is Paris?": [0.2, 1.0, 1.5, -0.3, 0.0],
    "What is the population of Paris?": [-0.5, 0.3, 2.0, 0.1, -1.0],
    "Who painted the Mona Lisa?": [-1.0, -2.0, 0.3, -1.0, -0.4],
    "What is the French capital?": [1e-20, 2e-20, 0.0, 1e-20, 4e-21],
    "What is the capital?": [3e5, 6.5e5, 1e4, 2.5e5, 1.5e5],
    "???": [0.0, 0.0, 0.0, 0.0, 0.0],
    "Say nothing.": [0.0, 0.0, 0.0, 0.0, 0.0],
}


def answer_relevancy_cases() -> list[tuple]:
    row = {"user_input": UQ, "response": "Paris is the capital of France."}
    vague = {**row, "response": "I am not sure, it depends."}
    g1, g2, g3, g4, g5 = (
        "What is the capital city of France?",
        "Which city is the capital of France?",
        "Where is Paris?",
        "What is the population of Paris?",
        "Who painted the Mona Lisa?",
    )
    return [
        ("strictness 3 committal", row, [question(g1), question(g2), question(g3)], {"strictness": 3}),
        ("strictness 3 one noncommittal", row, [question(g1), question(g2, 1), question(g3)], {"strictness": 3}),
        ("strictness 3 two noncommittal", vague, [question(g1, 1), question(g4), question(g3, 1)], {"strictness": 3}),
        ("strictness 3 all noncommittal", vague, [question(g1, 1), question(g2, 1), question(g3, 1)], {"strictness": 3}),
        ("strictness 3 all noncommittal negative mean", vague,
         [question(g5, 1), question(g5, 1), question(g4, 1)], {"strictness": 3}),
        ("noncommittal value 2", vague, [question(g1, 2), question(g2, 2), question(g3, 2)], {"strictness": 3}),
        ("strictness 1 committal", row, [question(g2)], {"strictness": 1}),
        ("strictness 1 noncommittal", vague, [question(g2, 1)], {"strictness": 1}),
        ("strictness 5 repeated question", row,
         [question(g1), question(g1), question(g2), question(g4), question(g1)], {"strictness": 5}),
        ("negative cosine", row, [question(g5), question(g4), question(g5)], {"strictness": 3}),
        ("one empty question", row, [question(g1), question(""), question(g3)], {"strictness": 3}),
        ("empty question's noncommittal flag is dropped", vague,
         [question(g1, 1), question("", 0), question(g3, 1)], {"strictness": 3}),
        ("all questions empty", row, [question(""), question("", 1), question("")], {"strictness": 3}),
        ("whitespace question", row, [question(g1), question("   "), question(g3)], {"strictness": 3}),
        ("tiny and large norms", row,
         [question("What is the French capital?"), question("What is the capital?"), question(g1)], {"strictness": 3}),
        ("zero-norm generated question", row, [question(g1), question("???"), question(g2)], {"strictness": 3}),
        ("zero-norm user_input", {**row, "user_input": "Say nothing."},
         [question(g1), question(g2), question(g3)], {"strictness": 3}),
        ("zero-norm and all noncommittal", vague,
         [question("???", 1), question(g1, 1), question(g2, 1)], {"strictness": 3}),
        ("empty response", {**row, "response": ""}, [], {"strictness": 3}),
    ]


def context_precision_cases(answer_key: str) -> list[tuple]:
    answer = REF if answer_key == "reference" else A

    def row(n: int) -> dict:
        return {"user_input": Q, answer_key: answer, "retrieved_contexts": CTX[:n]}

    def verdicts(*vs: int) -> list[tuple]:
        return [useful(v) for v in vs]

    cases = [
        ("1 context useful", row(1), verdicts(1)),
        ("1 context not useful", row(1), verdicts(0)),
        ("3 contexts [0,1,0]", row(3), verdicts(0, 1, 0)),
        ("3 contexts [1,1,0]", row(3), verdicts(1, 1, 0)),
        ("3 contexts [1,0,1]", row(3), verdicts(1, 0, 1)),
        ("3 contexts all zero", row(3), verdicts(0, 0, 0)),
        ("5 contexts all useful", row(5), verdicts(1, 1, 1, 1, 1)),
        ("5 contexts [1,0,1,0,1]", row(5), verdicts(1, 0, 1, 0, 1)),
        ("5 contexts [0,0,0,0,1]", row(5), verdicts(0, 0, 0, 0, 1)),
        ("5 contexts [0,1,1,0,1]", row(5), verdicts(0, 1, 1, 0, 1)),
        ("duplicate contexts [1,0]", {**row(0), "retrieved_contexts": [CTX[0], CTX[0]]}, verdicts(1, 0)),
        ("empty context string", {**row(0), "retrieved_contexts": ["", CTX[0]]}, verdicts(0, 1)),
        (f"{answer_key}-less", {**row(3), answer_key: ""}, []),
        ("no contexts", row(0), []),
    ]
    if answer_key == "reference":
        cases += [
            ("verdict 2", row(2), verdicts(2, 0)),
            ("verdict -1", row(2), verdicts(1, -1)),
        ]
    return cases


def context_recall_cases() -> list[tuple]:
    row = {"user_input": Q, "retrieved_contexts": CTX[:2], "reference": REF}
    r1 = "Albert Einstein was born in Germany."
    r2 = "Albert Einstein developed relativity."
    r3 = "Albert Einstein received the 1921 Nobel Prize."
    r4 = "Albert Einstein moved to Switzerland in 1895."
    seven = [f"Reference statement {i}." for i in range(1, 8)]
    return [
        ("all attributed", row, [attributions((r1, 1), (r2, 1), (r3, 1))]),
        ("none attributed", row, [attributions((r3, 0), (r4, 0))]),
        ("some attributed 2 of 4", row, [attributions((r1, 1), (r2, 0), (r3, 1), (r4, 0))]),
        ("1 of 3 attributed", row, [attributions((r1, 1), (r2, 0), (r3, 0))]),
        ("single attributed", row, [attributions((r1, 1))]),
        ("single not attributed", row, [attributions((r4, 0))]),
        ("seven classifications 3 attributed", row, [attributions(*zip(seven, [0, 1, 0, 0, 1, 1, 0]))]),
        ("zero classifications", row, [attributions()]),
        ("five contexts joined", {**row, "retrieved_contexts": CTX}, [attributions((r1, 1), (r2, 1), (r3, 0))]),
        ("one empty context string", {**row, "retrieved_contexts": [""]}, [attributions((r1, 0))]),
        ("attributed 2", row, [attributions((r1, 2), (r2, 1))]),
        ("attributed -1", row, [attributions((r1, 1), (r2, -1))]),
        ("empty reference", {**row, "reference": ""}, []),
        ("no contexts", {**row, "retrieved_contexts": []}, []),
    ]


# ---------------------------------------------------------------------------------------------


def plain_score(value: t.Any) -> t.Any:
    value = float(value)
    return "NaN" if math.isnan(value) else value


async def run_case(make_metric, name: str, inputs: dict, replies: list, prompts: dict,
                   strictness: int | None = None) -> dict:
    llm = ScriptedLLM(replies, prompts)
    case: dict[str, t.Any] = {"name": name, "inputs": inputs}
    embeddings = None
    if strictness is None:
        metric = make_metric(llm)
    else:
        texts = [inputs["user_input"]] + [r["question"] for _, r in replies]
        embeddings = FixedEmbeddings({x: VECTORS[x] for x in texts if x in VECTORS})
        metric = make_metric(llm, embeddings=embeddings, strictness=strictness)
        case["strictness"] = strictness
    case = {"metric": metric.name, **case}
    try:
        case["score"] = plain_score((await metric.ascore(**inputs)).value)
    except ScriptError:
        raise
    except Exception as e:  # noqa: BLE001 - Ragas' own refusal is what we record
        case["error"] = f"{type(e).__name__}: {e}"
    if len(llm.calls) != len(replies):
        raise ScriptError(f"{metric.name} / {name}: {len(replies) - len(llm.calls)} scripted replies unused")
    case["replies"] = llm.calls
    case["llm_calls"] = len(llm.calls)
    if embeddings is not None:
        case["embeddings"] = embeddings.vectors
        case["embedded_texts"] = embeddings.embedded
    # Keep the score or error last, after what produced it.
    for key in ("score", "error"):
        if key in case:
            case[key] = case.pop(key)
    return case


async def main() -> None:
    import ragas
    from ragas.metrics.collections import (
        AnswerRelevancy,
        ContextPrecisionWithoutReference,
        ContextPrecisionWithReference,
        ContextRecall,
        Faithfulness,
    )

    plan = [
        (Faithfulness, faithfulness_cases()),
        (AnswerRelevancy, answer_relevancy_cases()),
        (ContextPrecisionWithReference, context_precision_cases("reference")),
        (ContextPrecisionWithoutReference, context_precision_cases("response")),
        (ContextRecall, context_recall_cases()),
    ]
    prompts: dict[str, str] = {}
    cases = []
    for metric_class, metric_cases in plan:
        for name, inputs, replies, *extra in metric_cases:
            cases.append(await run_case(metric_class, name, inputs, replies, prompts, **(extra[0] if extra else {})))

    OUT.parent.mkdir(parents=True, exist_ok=True)
    # The prompts are only checked for consistency between calls, not recorded: the fixture holds
    # inputs, replies and scores, which is all the replay tests read.
    record = {"ragas": ragas.__version__, "cases": cases}
    OUT.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    counts: dict[str, int] = {}
    for case in cases:
        counts[case["metric"]] = counts.get(case["metric"], 0) + 1
    print(f"{len(cases)} cases at {OUT.relative_to(ROOT)}: {counts}")


if __name__ == "__main__":
    asyncio.run(main())
