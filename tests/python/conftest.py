from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The real parts some tests need. A test that needs one is marked `@pytest.mark.real_part(NAME)`
# (or its module sets `pytestmark`). Where parts are required (CI=true, or
# POLARS_RAG_REQUIRE_PARTS=1), the skip of such a test is turned into a failure that names the
# part, and so is a whole test module skipped at import (a pinned reference library missing).
# Every outcome of a marked test goes to the ledger file named by POLARS_RAG_PARTS_LEDGER, which
# scripts/test.sh reads to print one line per part at the end.
REAL_PARTS = ("embedding model", "judge server", "ray")


def parts_required() -> bool:
    flag = os.environ.get("POLARS_RAG_REQUIRE_PARTS", "").strip().lower()
    if flag in ("1", "true", "yes"):
        return True
    if flag in ("0", "false", "no"):
        return False
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def record(part: str, outcome: str, test: str, reason: str = "") -> None:
    path = os.environ.get("POLARS_RAG_PARTS_LEDGER")
    if not path:
        return
    line = "\t".join([part, outcome, test, " ".join(reason.split())]) + "\n"
    with open(path, "a", encoding="utf-8") as ledger:
        ledger.write(line)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_part(name): the test needs a real part (" + ", ".join(REAL_PARTS) + ")")


# Fixtures that provide a real part: a test that uses one needs the part, marked or not.
FIXTURE_PARTS = {"model_dir": "embedding model", "server_url": "judge server", "cluster": "ray"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, part in FIXTURE_PARTS.items():
            if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker("real_part") is None:
                item.add_marker(pytest.mark.real_part(part))


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    marker = item.get_closest_marker("real_part")
    if marker is None:
        return
    part = str(marker.args[0])
    if part not in REAL_PARTS:
        raise ValueError(f"{item.nodeid}: unknown real part {part!r} (known: {', '.join(REAL_PARTS)})")
    if report.skipped:
        reason = _skip_reason(report)
        if parts_required():
            record(part, "missing", item.nodeid, reason)
            report.outcome = "failed"
            report.longrepr = f"required part `{part}` is missing: {reason}"
        else:
            record(part, "skipped", item.nodeid, reason)
    elif report.when == "call" and report.passed:
        record(part, "ran", item.nodeid)
    elif report.failed:
        record(part, "failed", item.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    # A module skipped at import hides every test in it; where parts are required, that is a failure.
    if report.skipped and parts_required():
        reason = _skip_reason(report)
        report.outcome = "failed"
        report.longrepr = f"{report.nodeid} was skipped whole where every part is required: {reason}"


@pytest.fixture(scope="session")
def vectors() -> dict:
    return json.loads((ROOT / "tests/reference-vectors/vectors-seeds.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    return ROOT / "datasets/demo"
