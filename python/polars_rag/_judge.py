"""Judged metrics: an LLM judge (any OpenAI-compatible chat-completions server) asked through the
library's judge engine, with its persistent cache, bounded concurrency, retries, budget and
accounting. The functions are elementwise expressions, so they run in eager, lazy and streaming
queries; a row whose judgement failed keeps its row, with the reason in ``judge_error``."""

from __future__ import annotations

import json
import os
import pickle
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

import polars as pl
from polars.plugins import register_plugin_function

from polars_rag._common import _PLUGIN_PATH, FrameLike, IntoExprColumn, _frame, _names_its_errors, _plugin
from polars_rag._internal import citation_review as _citation_review
from polars_rag._internal import custom_judge_card as _custom_judge_card
from polars_rag._internal import judge_agreement as _judge_agreement
from polars_rag._internal import judge_cache as _judge_cache
from polars_rag._settings import Judge

__all__ = [
    "CitationSupportOptions",
    "CustomJudge",
    "JudgeAgreement",
    "PpiOptions",
    "answer_match",
    "citation_precision",
    "citation_recall_precision",
    "citation_review",
    "citation_support",
    "claim_check_report",
    "claim_checks",
    "create_nuggets",
    "custom_judge",
    "custom_judge_card",
    "g_eval",
    "judge_agreement",
    "judge_cache_clear",
    "judge_cache_stats",
    "judge_log",
    "nugget_assignment",
    "ppi_mean",
    "relevance_grade",
    "split_claims",
]

if TYPE_CHECKING:
    from typing_extensions import Unpack

class CitationSupportOptions(TypedDict, total=False):
    """Keyword options of :func:`citation_support` and :func:`citation_precision`; each left out
    (or ``None``) takes the library's default (:func:`~polars_rag.option_defaults`).

    ``judge``: the :class:`Judge` (default: the one of the ``POLARS_RAG_JUDGE_*`` environment
    variables). ``strict``: ask twice and keep the stricter verdict. ``lenient_below``: the share
    of the claim's keywords under which a full verdict is flagged lenient. ``echo_max_words``:
    the longest supporting phrase flagged as an echo.
    """

    judge: Judge | None
    strict: bool | None
    lenient_below: float | None
    echo_max_words: int | None


def citation_support(
    claim: IntoExprColumn,
    cited_span: IntoExprColumn,
    **options: Unpack[CitationSupportOptions],
) -> pl.Expr:
    """Does the cited span support the claim? One LLM judgement per (claim, cited_span) row.

    Returns a struct ``citation_support``: ``verdict`` (``fully_supported``,
    ``partially_supported``, ``not_supported``), ``supporting_phrase``, ``missing_or_extra``,
    ``decision_basis``; the automatic checks ``phrase_verified`` with ``phrase_start`` /
    ``phrase_end`` (code points of the span), ``unverified_phrase`` (a supporting verdict whose
    phrase is not in the span), ``lenient`` (fully supported on a phrase with less than
    ``lenient_below`` of the claim's keywords), ``echo`` (a phrase of at most ``echo_max_words``
    words), ``compound_claim`` (the claim holds several facts), ``runs_agree`` (with
    ``strict=True``: the judge is asked twice and the stricter verdict kept) and ``flagged``
    (any of them); the verdict as 0/1 numbers ``fully_supported``, ``partially_supported``,
    ``not_supported``; and ``judge_error`` when no valid judgement could be had. ``judge=None``
    uses the judge of the ``POLARS_RAG_JUDGE_*`` environment variables.
    """
    return _plugin("citation_support", [claim, cited_span], options, accepted=CitationSupportOptions)


def citation_precision(
    claim: IntoExprColumn,
    cited_span: IntoExprColumn,
    **options: Unpack[CitationSupportOptions],
) -> pl.Expr:
    """The share of judged (claim, cited_span) pairs fully supported, as one struct per column
    or group: ``citation_precision`` and the counts ``fully_supported``, ``partially_supported``,
    ``not_supported`` and ``failed`` (judgements that gave no verdict, left out of the share).
    Use it in ``select`` or ``group_by().agg()``; options as for :func:`citation_support`.
    """
    return _plugin("citation_precision", [claim, cited_span], options, accepted=CitationSupportOptions, aggregate=True)


class PpiOptions(TypedDict, total=False):
    """Keyword options of :func:`ppi_mean`; each left out (or ``None``) takes the library's
    default (:func:`~polars_rag.option_defaults`).

    ``alpha``: the error level (the interval covers the mean with probability 1 − ``alpha``).
    ``alternative``: ``"two-sided"``, ``"greater"`` (a lower bound) or ``"less"`` (an upper
    bound). ``lam``: the judge's weight (``None``: tuned, PPI++; 1: plain PPI; 0: the labels
    alone). ``compat``: ``"standard"`` or ``"ppi_py"`` (ppi_python's tuned interval, two-sided
    whatever ``alternative`` says).
    """

    alpha: float | None
    alternative: str | None
    lam: float | None
    compat: str | None


def ppi_mean(
    judged: IntoExprColumn,
    labels: IntoExprColumn,
    **options: Unpack[PpiOptions],
) -> pl.Expr:
    """Prediction-powered inference of a mean: the mean of a judged quantity from the judge's
    scores on every item (``judged``) and human labels on a few (``labels``, null where an item
    is not labelled), with a confidence interval that stays valid however biased the judge is.
    One struct per column or group: ``estimate``, ``ci_low``, ``ci_high``, ``lam``,
    ``classical_estimate`` / ``classical_ci_low`` / ``classical_ci_high`` (the labels alone),
    ``n_labelled``, ``n_unlabelled``, ``n_unjudged`` (items without a judge score, left out) and
    ``reason`` (why there is no estimate, else null). The numbers of ``ppi_python``
    (``ppi_mean_pointestimate``, ``ppi_mean_ci``, ``classical_mean_ci``). Use it in ``select``
    or ``group_by().agg()``.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({"judge": [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0],
        ...                    "label": [1.0, 0.0, 0.0, None, None, None, None, None]})
        >>> row = df.select(pr.ppi_mean("judge", "label", lam=1.0)).item()
        >>> round(row["estimate"], 4), row["n_labelled"], row["n_unlabelled"]
        (0.4667, 3, 5)
    """
    return _plugin("ppi_mean", [judged, labels], options, accepted=PpiOptions, aggregate=True)


@_names_its_errors
def citation_review(
    frame: FrameLike,
    *,
    support: str = "citation_support",
    xlsx: str | os.PathLike[str] | None = None,
) -> pl.DataFrame:
    """The rows of a judged table to check by hand, most suspicious first: every row whose
    ``citation_support`` (column ``support``) has no verdict, disagreeing strict runs, a
    supporting phrase not in the span, a ``not_supported`` or ``partially_supported`` verdict,
    or a ``lenient``, ``echo`` or ``compound_claim`` flag. Columns: ``row`` (its position in
    ``frame``), ``suspicion`` (the sum of its reasons' weights: no verdict 100, disagreeing runs
    50, unverified phrase 40, not supported 30, lenient 20, compound claim and echo 10,
    partially supported 5), ``reasons``, then ``frame``'s columns with ``support`` unnested.
    With ``xlsx``, also written there as a workbook (header frozen, text wrapped).
    """
    path = None if xlsx is None else os.fspath(xlsx)
    return _citation_review(_frame(frame), support, path)


def answer_match(
    question: IntoExprColumn,
    answer: IntoExprColumn,
    reference: IntoExprColumn,
    *,
    judge: Judge | None = None,
) -> pl.Expr:
    """Does the answer answer the question as the reference does? One LLM judgement per row.

    ``reference`` is a ``str`` column or a ``list[str]`` column (several reference answers: the
    answer matches when it matches any). Returns a struct ``answer_match``: ``match`` (bool),
    ``score`` (1.0 / 0.0), ``reasoning`` and ``judge_error``.
    """
    return _plugin("answer_match", [question, answer, reference], {"judge": judge})


def citation_recall_precision(
    answer: IntoExprColumn,
    passages: IntoExprColumn,
    *,
    at_most_citations: int | None = None,
    qampari: bool | None = None,
    question: IntoExprColumn | None = None,
    judge: Judge | None = None,
) -> pl.Expr:
    """ALCE's citation recall and precision, the judge as the entailment checker: the answer's
    sentences (NLTK's Punkt) cite ``passages`` by ``[n]`` markers (``passages``: ``list[str]``, or
    ``list[struct{title, text}]`` written ``Title: ...`` as ALCE writes them). Recall: the share of
    sentences their cited passages entail jointly; precision: the share of citations needed (one
    is not when it does not entail the sentence alone and the others entail it without it). Only
    the questions ALCE asks are asked, in rounds; ALCE's reading of markers is kept (``[1, 2]``
    cites passage 1, ``[0]`` the last passage, ``[１]`` and ``[١]`` passage 1 (any script's
    digits), a repeated marker counts twice; at most ``at_most_citations``, default 3, per
    sentence). ``qampari=True`` is ALCE's QAMPARI reading: the answer is a comma-separated list
    and each item is checked as "``question`` item" (the ``question`` column is then required).
    Returns a struct ``citation_recall_precision``: ``citation_recall``, ``citation_precision``,
    ``sentences`` (list items with ``qampari``), ``citations``, ``out_of_range`` (sentences
    citing past the last passage, scored 0) and ``judge_error``; null for an answer without a
    sentence (empty or whitespace: ALCE leaves it out). The mean of each over the answers is
    ALCE's ``citation_rec`` / ``citation_prec`` divided by 100.
    """
    options: dict[str, object] = {"judge": judge}
    if at_most_citations is not None:
        options["at_most_citations"] = at_most_citations
    if qampari is not None:
        options["qampari"] = qampari
    columns = [answer, passages] if question is None else [answer, passages, question]
    return _plugin("citation_recall_precision", columns, options)


def claim_checks(
    answer: IntoExprColumn,
    reference: IntoExprColumn,
    contexts: IntoExprColumn,
    *,
    judge: Judge | None = None,
) -> pl.Expr:
    """RAGChecker's claim-level evaluation with a judge doing both of its models' jobs: the judge
    splits the answer and the reference answer into claims (the ``split_claims`` card) and checks
    each (the ``entailment`` card) against the other answer and against each of the ``contexts``
    (``list[str]``); the eleven scores are :func:`claim_check_scores` of those verdicts. Returns a
    struct ``claim_checks``: ``precision``, ``recall``, ``f1``, ``claim_recall``,
    ``context_precision``, ``context_utilization``, ``noise_sensitivity_in_relevant``,
    ``noise_sensitivity_in_irrelevant``, ``hallucination``, ``self_knowledge``, ``faithfulness``,
    then ``response_claims``, ``reference_claims`` and the four verdict tables
    (``response_in_reference``, ``reference_in_response``, ``response_in_chunks``,
    ``reference_in_chunks``), and ``judge_error``. With several reference answers
    (``list[str]``) the first is used. Every distinct check is asked once and cached.
    """
    return _plugin("claim_checks", [answer, reference, contexts], {"judge": judge})


def create_nuggets(
    question: IntoExprColumn,
    sources: IntoExprColumn,
    *,
    judge: Judge | None = None,
    max_nuggets: int | None = None,
    window: int | None = None,
) -> pl.Expr:
    """The nuggets of each question, as the TREC 2024 RAG track's AutoNuggetizer writes them:
    atomic facts a good answer contains, from the question's ``sources`` (reference answers or
    relevant passages; ``list[str]``, ``str``, or ``list[struct]`` with a ``text`` field). The judge
    reads ``window`` sources at a time (10) and updates the list each time, then labels each
    nugget ``vital`` or ``okay`` (one nugget per call); the vital ones come first, each
    group in the order written, and the first ``max_nuggets`` (30) are kept.

    Returns a struct ``create_nuggets``: ``nuggets`` (``list[struct{text, importance}]``) and
    ``judge_error``. Run it once and store the nuggets in the golden table's ``nuggets`` column,
    so every run is assessed against the same nuggets (:func:`nugget_assignment`, and ``score``
    reads that column).
    """
    options = {"judge": judge, "max_nuggets": max_nuggets, "window": window}
    return _plugin("create_nuggets", [question, sources], options)


def nugget_assignment(
    answer: IntoExprColumn,
    nuggets: IntoExprColumn,
    *,
    judge: Judge | None = None,
) -> pl.Expr:
    """Each nugget of a question (``list[struct{text, importance}]``, what
    :func:`create_nuggets` writes, or its struct) assessed against the answer by the judge:
    ``support``, ``partial_support`` or ``not_support``, one question per distinct (nugget,
    answer) pair, cached. Returns a struct ``nugget_assignment``: ``assignment`` (a label per
    nugget, in the nuggets' order), the four scores of :func:`nugget_scores`
    (``strict_vital_score``, ``strict_all_score``, ``vital_score``, ``all_score``; 0 without
    nuggets, as in nuggetizer) and ``judge_error``.
    """
    return _plugin("nugget_assignment", [answer, nuggets], {"judge": judge})


def claim_check_report(scores: IntoExprColumn, *, compat: str | None = None) -> pl.Expr:
    """RAGChecker's dataset report (an aggregate: use it in ``select`` or ``group_by().agg()``):
    over a column of per-answer scores (the struct :func:`claim_check_scores` or
    :func:`claim_checks` writes), each of the eleven scores' mean over the answers that have
    them all, in [0, 1]. ``compat="ragchecker"`` gives RAGChecker's report numbers: the mean ×
    100, rounded to one decimal as numpy rounds. Null without scored answers.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({"a": [["entailment", "neutral", "neutral"], ["entailment"]],
        ...                    "b": [["entailment"], ["entailment"]],
        ...                    "c": [[["entailment"], ["neutral"], ["neutral"]], [["entailment"]]],
        ...                    "d": [[["entailment"]], [["entailment"]]]})
        >>> scores = pr.claim_check_scores("a", "b", "c", "d")
        >>> df.select(pr.claim_check_report(scores, compat="ragchecker")).item()["precision"]
        66.7
    """
    if compat is not None and compat not in ("standard", "ragchecker"):
        raise ValueError(f"claim_check_report: compat must be 'standard' or 'ragchecker', got {compat!r}")
    options = {"compat": compat or "standard"}
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="claim_check_report",
        args=[scores],
        kwargs=options,
        is_elementwise=False,
        returns_scalar=True,
    )


def relevance_grade(
    question: IntoExprColumn,
    passage: IntoExprColumn,
    *,
    judge: Judge | None = None,
) -> pl.Expr:
    """How well a passage answers a question, graded 0-3 by the judge on the scale of the TREC
    2024 RAG track's relevance assessor (UMBRELA), in this project's own prompt: 3 about the
    question and holding the answer, 2 holding an incomplete, unclear or buried answer, 1 on topic
    without the answer, 0 unrelated. One judgement per row (explode a run's retrieved passages
    first). Returns a struct ``relevance_grade``: ``grade`` (int), ``reason`` and ``judge_error``.
    The grades are graded relevance judgements: the ranked metrics read them as qrels (with
    ``relevance_level`` saying which grade counts as relevant).
    """
    return _plugin("relevance_grade", [question, passage], {"judge": judge})


def g_eval(
    question: IntoExprColumn,
    answer: IntoExprColumn,
    reference: IntoExprColumn | None = None,
    *,
    criteria: str | None = None,
    evaluation_steps: list[str] | None = None,
    score_min: int | None = None,
    score_max: int | None = None,
    logprobs: bool | None = None,
    judge: Judge | None = None,
) -> pl.Expr:
    """A rubric judge in the style of G-Eval / DeepEval's ``GEval``: the judge reads the question,
    the answer and (when given) a reference answer, follows ``evaluation_steps`` for your
    ``criteria`` (required), and gives an integer from ``score_min`` to ``score_max`` with its
    reason. When the server returns token log-probabilities (asked for unless
    ``logprobs=False``), the score is the probability-weighted mean of the candidate score
    tokens (those of at least 1 %), as G-Eval defines it.

    Returns a struct ``g_eval``: ``score`` (mapped to [0, 1]), ``raw_score`` (the integer
    written), ``weighted_score`` (null without log-probabilities), ``reason``, ``judge_error``.
    The rubric is part of the prompt's hash, so a changed rubric never reuses cached replies.
    """
    if reference is None:
        reference = pl.lit("", dtype=pl.String)
    options = {
        "judge": judge,
        "criteria": criteria,
        "evaluation_steps": evaluation_steps,
        "score_min": score_min,
        "score_max": score_max,
        "logprobs": logprobs,
    }
    return _plugin("g_eval", [question, answer, reference], options)


def split_claims(
    answer: IntoExprColumn,
    *,
    judge: Judge | None = None,
    method: str | None = None,
) -> pl.Expr:
    """The atomic claims of an answer: a struct ``split_claims`` with ``claims`` (``list[str]``;
    explode it, then judge each with :func:`citation_support`) and ``judge_error``.

    ``method="judge"`` (default) asks the judge; ``method="rules"`` splits without a model:
    sentences, then semicolons, then coordinating "and" / "but" / "while" / "whereas" /
    "although" between parts of three words or more.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> df = pl.DataFrame({"answer": ["It opened in 1932 and it cost $10 million. It is long."]})
        >>> df.select(pr.split_claims("answer", method="rules").struct.field("claims")).item().to_list()
        ['It opened in 1932', 'it cost $10 million', 'It is long']
    """
    if method is not None and method not in ("judge", "rules"):
        raise ValueError(f"split_claims: method must be 'judge' or 'rules', got {method!r}")
    return _plugin("split_claims", [answer], {"judge": judge, "method": method})


class CustomJudge(NamedTuple):
    """A judge defined as data, checked: its card (id, version, inputs, system text, reply
    schema), the output field of each reply field, and its signature (see
    :func:`custom_judge_card`)."""

    card: dict[str, Any]
    fields: dict[str, str]
    signature: str


#: The deepest a card given as a dict may nest before it is refused here (pickling recurses once
#: a level); the engine's own, tighter bound on the schema (64 levels) applies after. And the
#: most bytes of a card file, as the engine allows.
_MAX_CARD_DEPTH = 200
_MAX_CARD_BYTES = 16 << 20


def _nesting_depth(value: Any) -> int:
    """How deep dicts and lists nest in `value` (a scalar is 0), counted without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > _MAX_CARD_DEPTH:
            break
        if isinstance(item, Mapping):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _card_source(template: Mapping[str, Any] | str | os.PathLike[str], function: str) -> Any:
    """A card as the engine takes it: a dict as is, TOML text as is, a file's TOML text.

    A dict nested deeper than a card may be is refused here, before it is pickled (which
    recurses once a level); a path must name a regular file of at most 16 MiB (a FIFO would
    block the read)."""
    if isinstance(template, Mapping):
        if _nesting_depth(template) > _MAX_CARD_DEPTH:
            raise ValueError(f"{function}: the card nests more than {_MAX_CARD_DEPTH} levels deep")
        return dict(template)
    if isinstance(template, os.PathLike) or (
        isinstance(template, str) and "\n" not in template and template.endswith(".toml")
    ):
        try:
            status = os.stat(template)
            if not stat.S_ISREG(status.st_mode):
                raise ValueError(f"{function}: the card {os.fspath(template)!r} is not a regular file")
            if status.st_size > _MAX_CARD_BYTES:
                raise ValueError(
                    f"{function}: the card {os.fspath(template)!r} is {status.st_size} bytes, "
                    f"more than the {_MAX_CARD_BYTES >> 20} MiB a card may have"
                )
            with open(template, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{function}: cannot read the card {os.fspath(template)!r}: {e}") from e
    if isinstance(template, str):
        return template
    raise TypeError(f"{function}: template must be a dict, TOML text or a .toml file path, got {template!r}")


def custom_judge_card(
    template: Mapping[str, Any] | str | os.PathLike[str], *, judge: Judge | None = None
) -> CustomJudge:
    """Checks a judge card given as data and tells what :func:`custom_judge` will return for it.

    Example:
        >>> import polars_rag as pr
        >>> card = {
        ...     "id": "politeness", "version": "1", "inputs": ["answer"],
        ...     "system": "Is the answer polite?",
        ...     "schema": {"type": "object", "required": ["polite"],
        ...                "properties": {"polite": {"type": "boolean"}, "why": {"type": "string"}}},
        ... }
        >>> pr.custom_judge_card(card).fields
        {'polite': 'bool', 'why': 'str', 'judge_error': 'str'}
    """
    if judge is not None and not isinstance(judge, Judge):
        raise TypeError(f"custom_judge_card: judge must be a polars_rag.Judge, got {judge!r}")
    options = {"template": _card_source(template, "custom_judge_card"), "judge": (judge or Judge()).settings()}
    checked = json.loads(_custom_judge_card(pickle.dumps(options, protocol=4), "custom_judge_card"))
    return CustomJudge(checked["card"], dict(checked["fields"]), checked["signature"])


def custom_judge(
    template: Mapping[str, Any] | str | os.PathLike[str],
    inputs: Mapping[str, IntoExprColumn] | Sequence[IntoExprColumn],
    *,
    judge: Judge | None = None,
) -> pl.Expr:
    """A judge you define as data, with the engine's cache, retries, validation and accounting.

    ``template`` is the card: a dict, TOML text or a ``.toml`` file with ``id``, ``version``,
    ``inputs`` (the names of what it judges), ``system`` (the instructions) and ``schema`` (the
    JSON schema of the reply, an object schema), and optionally ``weighted_score`` (an integer
    field to weight by the judge's token probabilities). ``inputs`` maps each of the card's
    input names to a column or expression (or lists them in the card's order).

    Returns a struct named after the card's id: one field per reply field (string, integer,
    float, boolean or a list of one of these, by the schema's type; other fields as JSON text),
    ``weighted_score`` when the card asks for it, and ``judge_error``. The inputs are sent as a
    JSON object in the user message, never as instructions, as for the built-in judges.

    Example:
        >>> import polars as pl
        >>> import polars_rag as pr
        >>> card = {
        ...     "id": "politeness", "version": "1", "inputs": ["answer"],
        ...     "system": "Is the answer polite?",
        ...     "schema": {"type": "object", "required": ["polite"], "properties": {"polite": {"type": "boolean"}}},
        ... }
        >>> expr = pr.custom_judge(card, {"answer": "text"}, judge=pr.Judge(model="m", cache=None))
        >>> pl.LazyFrame({"text": ["Thanks!"]}).select(expr).collect_schema()["politeness"]
        Struct({'polite': Boolean, 'judge_error': String})
    """
    if judge is not None and not isinstance(judge, Judge):
        raise TypeError(f"custom_judge: judge must be a polars_rag.Judge, got {judge!r}")
    options = {"template": _card_source(template, "custom_judge"), "judge": (judge or Judge()).settings()}
    checked = json.loads(_custom_judge_card(pickle.dumps(options, protocol=4), "custom_judge"))
    names: list[str] = checked["card"]["inputs"]
    card_id: str = checked["card"]["id"]
    if isinstance(inputs, Mapping):
        unknown = sorted(set(inputs) - set(names))
        missing = [name for name in names if name not in inputs]
        if unknown or missing:
            raise ValueError(
                f"custom_judge {card_id}: inputs must name exactly the card's inputs {names}; "
                + (f"missing {missing}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"not in the card {unknown}" if unknown else "")
            )
        columns = [inputs[name] for name in names]
    elif isinstance(inputs, (str, pl.Expr)) or not isinstance(inputs, Sequence):
        raise TypeError(f"custom_judge {card_id}: inputs must be a dict of input name to column, or a list in the card's order")
    else:
        columns = list(inputs)
        if len(columns) != len(names):
            raise ValueError(f"custom_judge {card_id}: the card has {len(names)} inputs {names}, got {len(columns)} columns")
    return register_plugin_function(
        plugin_path=_PLUGIN_PATH,
        function_name="custom_judge",
        args=columns,
        kwargs=options,
        is_elementwise=True,
    ).alias(card_id)


@_names_its_errors
def judge_cache_stats(cache: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What the judge cache in directory ``cache`` (default: the library's) holds: its file,
    entries, bytes and entries per (prompt, model)."""
    stats: dict[str, Any] = json.loads(_judge_cache("stats", None if cache is None else os.fspath(cache), None))
    return stats


@_names_its_errors
def judge_cache_clear(cache: str | os.PathLike[str] | None = None, template: str | None = None) -> int:
    """Removes the cached replies of directory ``cache`` (default: the library's): all of them,
    or those of one prompt (``template``, e.g. ``"citation_support"``). Returns how many."""
    return int(_judge_cache("clear", None if cache is None else os.fspath(cache), template))


@_names_its_errors
def judge_log(cache: str | os.PathLike[str] | None = None, template: str | None = None) -> pl.DataFrame:
    """The judge log of directory ``cache`` (default: the library's), as ``polars-rag judge-cache
    log`` writes it: one row per cached reply, in the order they were stored (only prompt
    ``template``'s when given), with ``key``, ``template``, ``template_hash``, ``model``,
    ``base_url`` (credentials removed), ``sample``, ``messages`` (``list[struct{role,
    content}]``: what the judge saw), ``reply`` (the validated JSON text), ``prompt_tokens``,
    ``completion_tokens``, ``latency_ms`` and ``created`` (UTC). Never the API key. Replies
    cached before the log was kept have null ``messages``, ``base_url`` and ``latency_ms``.

    Example:
        >>> import tempfile, polars_rag as pr
        >>> pr.judge_log(tempfile.mkdtemp()).height  # an empty cache directory
        0
    """
    from polars_rag._internal import judge_log as _judge_log

    return _judge_log(None if cache is None else os.fspath(cache), template)


class JudgeAgreement(NamedTuple):
    """What :func:`judge_agreement` returns."""

    #: One row: ``n`` (pairs compared), ``failed`` (labelled rows the judge gave no verdict),
    #: ``accuracy`` and ``kappa`` (Cohen's, as scikit-learn's ``cohen_kappa_score``; null when
    #: undefined).
    summary: pl.DataFrame
    #: The confusion matrix as ``label``, ``predicted``, ``count`` rows.
    confusion: pl.DataFrame


@_names_its_errors
def judge_agreement(frame: FrameLike, predicted: str, labels: str) -> JudgeAgreement:
    """How far a judge agrees with labels, or with a second run: columns ``predicted`` and
    ``labels`` of ``frame`` hold verdicts (strings, or booleans as :func:`answer_match` gives), row
    for row. Rows without a label are left out; labelled rows without a verdict count as failed.

    Example:
        >>> import polars as pl, polars_rag as pr
        >>> df = pl.DataFrame({"verdict": ["fully_supported", "not_supported", "not_supported", None],
        ...                    "label": ["fully_supported", "partially_supported", "not_supported", "not_supported"]})
        >>> got = pr.judge_agreement(df, "verdict", "label")
        >>> got.summary.row(0, named=True)
        {'n': 3, 'failed': 1, 'accuracy': 0.6666666666666666, 'kappa': 0.5}
    """
    df = _frame(frame)
    summary, confusion = _judge_agreement(df.get_column(predicted), df.get_column(labels))
    return JudgeAgreement(summary, confusion)
