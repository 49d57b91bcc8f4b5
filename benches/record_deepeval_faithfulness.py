"""Records DeepEval 4.3.1's FaithfulnessMetric on scripted LLM replies, for the judged-metric
replay tests.

    (environment: benches/requirements-deepeval.txt)
    python3 -m venv .venv-bench-deepeval
    .venv-bench-deepeval/bin/pip install -r benches/requirements-deepeval.txt
    .venv-bench-deepeval/bin/python benches/record_deepeval_faithfulness.py

No model, no network, no login: telemetry, update checks, .env loading and the legacy key file
are switched off before deepeval is imported, DeepEval's local state goes to a temporary folder,
and the judge is a DeepEvalBaseLLM subclass whose generate(prompt, schema) hands back, call by
call, a pre-scripted reply for the schema DeepEval asks for (Truths, Claims, Verdicts,
FaithfulnessScoreReason). The real FaithfulnessMetric (eval_mode="llm", async_mode=False so the
calls come in a fixed order, include_reason=False unless a case says otherwise) does the rest.

A case's replies come back in one of two forms ("reply_format"):
  "schema"    the reply validated into DeepEval's pydantic schema, as a structured-output judge
              returns it; the verdict field is Literal["yes", "no", "borderline"], so nothing
              else can get through;
  "json_text" the reply as a JSON string, as a plain JSON-mode judge returns it; DeepEval then
              parses it itself (trimAndLoadJson) and normalises each verdict (strip, lower-case,
              leading [a-z]+ word, legacy "idk" -> "borderline", anything else dropped).

Writes tests/fixtures/judged/deepeval-faithfulness.json:
    {"deepeval": version,
     "cases": [{"name", "inputs": {"input", "actual_output", "retrieval_context"},
                ["strict_mode": true,] ["penalize_ambiguous_claims": true,]
                ["include_reason": true,] ["truths_extraction_limit": n,]
                "reply_format", "replies": [{"schema", "input", "json"}], "llm_calls",
                "score" (a float) | "error" ("ExceptionType: message")}]}
"replies" are in call order and all were consumed ("llm_calls" == len(replies)); each reply's
"input" is what DeepEval put into that call's prompt: {"retrieval_context"} for Truths (the
retrieval context joined with "\\n\\n"), {"actual_output"} for Claims, {"retrieval_context",
"claims"} for Verdicts (the truths joined with "\\n\\n", and the claims list, which the prompt
shows as its Python repr), {"score", "contradictions"} for FaithfulnessScoreReason.
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "judged" / "deepeval-faithfulness.json"

# DeepEval keeps local state (telemetry id, key file) under DEEPEVAL_HOME and a .deepeval folder
# in the working directory: both go to a temporary folder, left behind on exit.
_STATE = tempfile.TemporaryDirectory(prefix="deepeval-state-")
os.chdir(_STATE.name)
os.environ.update({
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",
    "DEEPEVAL_EVAL_MODE": "llm",
    "DEEPEVAL_HOME": _STATE.name,
    "ERROR_REPORTING": "NO",
    "CONFIDENT_TRACE_FLUSH": "NO",
})
for _key in ("CONFIDENT_API_KEY", "DEEPEVAL_API_KEY", "OPENAI_API_KEY"):
    os.environ.pop(_key, None)

import deepeval  # noqa: E402
from deepeval.metrics import FaithfulnessMetric  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402
from pydantic import BaseModel  # noqa: E402


class ScriptError(Exception):
    """The script and DeepEval disagree on the calls: a bug in this recorder, never recorded."""


# Where each prompt puts its inputs (deepeval/metrics/faithfulness/templates/*.txt, text-only).
def _between(prompt: str, start: str, end: str) -> str:
    try:
        i = prompt.rindex(start) + len(start)
        return prompt[i:prompt.index(end, i)]
    except ValueError:
        raise ScriptError(f"markers {start!r} .. {end!r} not found in the prompt") from None


def prompt_input(name: str, prompt: str) -> dict:
    if name == "Truths":
        return {"retrieval_context": _between(prompt, "\nText:\n", "\n\nJSON:")}
    if name == "Claims":
        return {"actual_output": _between(prompt, "\nAI Output:\n", "\n\nJSON:")}
    if name == "Verdicts":
        shown = _between(prompt, "\n\nClaims:\n", "\n\nJSON:")
        claims = ast.literal_eval(shown)
        if str(claims) != shown:
            raise ScriptError(f"claims shown as {shown!r}, not as a Python list repr")
        return {"retrieval_context": _between(prompt, "\nRetrieval Contexts:\n", "\n\nClaims:\n"),
                "claims": claims}
    if name == "FaithfulnessScoreReason":
        return {"score": _between(prompt, "Faithfulness Score:\n", "\n"),
                "contradictions": ast.literal_eval(_between(prompt, "Contradictions:\n", "\n"))}
    raise ScriptError(f"DeepEval asked for an unexpected schema {name}")


class ScriptedLLM(DeepEvalBaseLLM):
    """Replies with the scripted (schema name, JSON) pairs in order, validated into the schema
    ("schema") or as JSON text ("json_text")."""

    def __init__(self, replies: list[tuple[str, t.Any]], reply_format: str):
        self.replies = list(replies)
        self.reply_format = reply_format
        self.calls: list[dict] = []
        self.script_error: ScriptError | None = None
        super().__init__("scripted-judge")

    def load_model(self, *args, **kwargs):
        return self

    def get_model_name(self, *args, **kwargs) -> str:
        return "scripted-judge"

    def generate(self, prompt: str, schema: type[BaseModel] | None = None, **kwargs) -> t.Any:
        try:
            return self._reply(prompt, schema)
        except ScriptError as e:  # kept too, in case something between here and measure() eats it
            self.script_error = self.script_error or e
            raise

    def _reply(self, prompt: str, schema: type[BaseModel] | None) -> t.Any:
        if schema is None:
            raise ScriptError("DeepEval called generate without a schema")
        name = schema.__name__
        if len(self.calls) == len(self.replies):
            raise ScriptError(f"DeepEval made call {len(self.calls) + 1} ({name}) past the script")
        scripted, reply = self.replies[len(self.calls)]
        if scripted != name:
            raise ScriptError(f"call {len(self.calls) + 1}: DeepEval asked for {name}, script has {scripted}")
        self.calls.append({"schema": name, "input": prompt_input(name, prompt), "json": reply})
        if self.reply_format == "json_text":
            return json.dumps(reply, ensure_ascii=False)
        return schema.model_validate(reply)

    async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None, **kwargs) -> t.Any:
        raise ScriptError("async_mode=False: a_generate is not expected")


# ---------------------------------------------------------------------------------------------
# Scripted replies, one helper per schema.


def truths(*texts: str) -> tuple[str, dict]:
    return "Truths", {"truths": list(texts)}


def claims(*texts: str) -> tuple[str, dict]:
    return "Claims", {"claims": list(texts)}


def verdicts(*values: str) -> tuple[str, dict]:
    return "Verdicts", {"verdicts": [
        {"verdict": v} if v == "yes" else {"verdict": v, "reason": "scripted"} for v in values
    ]}


def reason(text: str) -> tuple[str, dict]:
    return "FaithfulnessScoreReason", {"reason": text}


# ---------------------------------------------------------------------------------------------
# Cases: (name, inputs, replies, options). Options: reply_format (default "schema"), strict_mode,
# penalize_ambiguous_claims, include_reason, truths_extraction_limit.

Q = "Where was Albert Einstein born and what is he known for?"
A = "Einstein was born in Germany. He developed the theory of relativity and won a Nobel Prize."
CTX = [
    "Albert Einstein was a German-born theoretical physicist.",
    "He is best known for developing the theory of relativity.",
]
T1 = "Albert Einstein was born in Germany."
T2 = "Albert Einstein was a theoretical physicist."
T3 = "Albert Einstein developed the theory of relativity."
C1 = "Einstein was born in Germany."
C2 = "Einstein developed the theory of relativity."
C3 = "Einstein won a Nobel Prize."
C4 = "Einstein was born in 1879."


def cases() -> list[tuple]:
    row = {"input": Q, "actual_output": A, "retrieval_context": CTX}
    T = truths(T1, T2, T3)
    text = {"reply_format": "json_text"}
    return [
        ("all yes", row, [T, claims(C1, C2, C3), verdicts("yes", "yes", "yes")], {}),
        ("all no", row, [T, claims(C1, C2), verdicts("no", "no")], {}),
        ("mixed yes no borderline", row,
         [T, claims(C1, C2, C3, C4), verdicts("yes", "no", "borderline", "yes")], {}),
        ("mixed yes no idk as JSON text", row,
         [T, claims(C1, C2, C3, C4), verdicts("yes", "no", "idk", "no")], text),
        ("odd case and whitespace as JSON text", row,
         [T, claims(C1, C2, C3, C4), verdicts("  No ", "YES", "Idk", " yes\n")], text),
        ("leading word of a sentence as JSON text", row,
         [T, claims(C1, C2, C3), verdicts("No, the context says otherwise.", "yes.", "Borderline-ish")], text),
        ("zero claims: no verdicts call", row, [T, claims()], {}),
        ("fewer verdicts than claims", row, [T, claims(C1, C2, C3), verdicts("yes", "no")], {}),
        ("more verdicts than claims", row, [T, claims(C1, C2), verdicts("yes", "yes", "yes", "no")], {}),
        ("empty verdict list", row, [T, claims(C1, C2), verdicts()], {}),
        ("maybe is dropped as JSON text", row,
         [T, claims(C1, C2, C3), verdicts("yes", "maybe", "no")], text),
        ("only unknown verdicts as JSON text", row,
         [T, claims(C1, C2), verdicts("maybe", "unsure")], text),
        ("empty retrieval context list", {**row, "retrieval_context": []},
         [truths(), claims(C1, C2), verdicts("no", "borderline")], {}),
        ("five contexts joined, one empty", {**row, "retrieval_context": CTX + ["", "Bananas are yellow.", "x"]},
         [T, claims(C1), verdicts("yes")], {}),
        ("strict mode below 1", row,
         [T, claims(C1, C2, C3), verdicts("yes", "no", "yes")], {"strict_mode": True}),
        ("strict mode all pass", row,
         [T, claims(C1, C2, C3), verdicts("yes", "borderline", "yes")], {"strict_mode": True}),
        ("penalize ambiguous claims", row,
         [T, claims(C1, C2, C3, C4), verdicts("yes", "borderline", "no", "yes")],
         {"penalize_ambiguous_claims": True}),
        ("truths extraction limit 1 does not truncate", row,
         [T, claims(C1, C2), verdicts("yes", "no")], {"truths_extraction_limit": 1}),
        ("include reason adds a reason call", row,
         [T, claims(C1, C2, C3), verdicts("yes", "no", "borderline"),
          reason("The score is 0.67 because the claim that Einstein won a Nobel Prize is unsupported.")],
         {"include_reason": True}),
        ("empty actual_output", {**row, "actual_output": ""}, [], {}),
    ]


# ---------------------------------------------------------------------------------------------


def run_case(name: str, inputs: dict, replies: list, options: dict) -> dict:
    reply_format = options.get("reply_format", "schema")
    llm = ScriptedLLM(replies, reply_format)
    metric = FaithfulnessMetric(
        model=llm,
        eval_mode="llm",
        async_mode=False,
        include_reason=options.get("include_reason", False),
        strict_mode=options.get("strict_mode", False),
        penalize_ambiguous_claims=options.get("penalize_ambiguous_claims", False),
        truths_extraction_limit=options.get("truths_extraction_limit"),
        verbose_mode=False,
    )
    case: dict[str, t.Any] = {"name": name, "inputs": inputs}
    case.update({k: v for k, v in options.items() if k != "reply_format"})
    case["reply_format"] = reply_format
    try:
        score = metric.measure(LLMTestCase(**inputs), _show_indicator=False)
        case["score"] = float(score)
    except ScriptError:
        raise
    except Exception as e:  # noqa: BLE001 - DeepEval's own refusal is what we record
        case["error"] = f"{type(e).__name__}: {e}"
    if llm.script_error is not None:
        raise llm.script_error
    if len(llm.calls) != len(replies):
        raise ScriptError(f"{name}: {len(replies) - len(llm.calls)} scripted replies unused")
    check_inputs(name, inputs, llm.calls)
    if "score" in case and options.get("include_reason") and not metric.reason:
        raise ScriptError(f"{name}: no reason came back")
    case["replies"] = llm.calls
    case["llm_calls"] = len(llm.calls)
    for key in ("score", "error"):
        if key in case:
            case[key] = case.pop(key)
    return case


def check_inputs(name: str, inputs: dict, calls: list[dict]) -> None:
    """Confirms what DeepEval put into each prompt: the joins this fixture documents."""
    by_schema = {c["schema"]: c for c in calls}
    if "Truths" in by_schema:
        want = "\n\n".join(inputs["retrieval_context"])
        if by_schema["Truths"]["input"]["retrieval_context"] != want:
            raise ScriptError(f"{name}: Truths prompt does not hold the contexts joined with blank lines")
    if "Claims" in by_schema and by_schema["Claims"]["input"]["actual_output"] != inputs["actual_output"]:
        raise ScriptError(f"{name}: Claims prompt does not hold actual_output")
    if "Verdicts" in by_schema:
        got = by_schema["Verdicts"]["input"]
        if got["retrieval_context"] != "\n\n".join(by_schema["Truths"]["json"]["truths"]):
            raise ScriptError(f"{name}: Verdicts prompt does not hold the truths joined with blank lines")
        if got["claims"] != by_schema["Claims"]["json"]["claims"]:
            raise ScriptError(f"{name}: Verdicts prompt does not hold the claims")


def main() -> None:
    recorded = [run_case(*c) for c in cases()]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    record = {"deepeval": deepeval.__version__, "cases": recorded}
    OUT.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(recorded)} cases at {OUT.relative_to(ROOT)}")
    for case in recorded:
        print(f"  {case['name']}: {case['llm_calls']} calls, {case.get('score', case.get('error'))}")


if __name__ == "__main__":
    main()
