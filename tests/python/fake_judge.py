"""The tests' judge server: the package's own (``polars_rag.testing``), so that examples that
need a judge run anywhere the package is installed."""

from polars_rag.testing import FakeJudge, completion, judged_reply, rubric_reply, statements

__all__ = ["FakeJudge", "completion", "judged_reply", "rubric_reply", "statements"]
