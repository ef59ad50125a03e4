"""Gold never reaches planning or search, and runs are deterministic.

(1) The import graph: planning and search modules (and the readout renderer) import neither `resolver.metrics.scoring` nor
`resolver.exchange.imported` (the resolver modules that read gold) nor `oracle`, following resolver
imports transitively, lazy imports inside functions included; no resolver module imports oracle
at all.
(2) Replacing every gold answer with nonsense changes no prediction, trace or readout.
(3) Two runs of the same inputs write byte-identical predictions.jsonl (and traces, readouts).
"""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from import_graph import imports_of

import resolver
from resolver.haystack import bundled_path
from resolver.results.result_schema import loads_lines
from resolver.run.config import RunConfig
from resolver.run.runs import execute

PACKAGE = Path(resolver.__file__).resolve().parent
PLAN_AND_SEARCH = ["plan.plans", "plan.planning", "plan.compile_rules", "plan.compile_lexicon",
                   "models.compile_ollama", "plan.lexicon", "plan.question", "search.path_search",
                   "search.resolve", "search.candidates", "store.fact_store", "text.facts",
                   "memory.readout"]
FORBIDDEN = ("resolver.metrics.scoring", "resolver.exchange.imported", "oracle")


def _module_file(name: str) -> Path | None:
    """File of a resolver module, or None for anything outside the package."""
    if name != "resolver" and not name.startswith("resolver."):
        return None
    parts = name.split(".")[1:]
    base = PACKAGE.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def reachable(start: str) -> set[str]:
    """Modules imported by `start`, transitively through resolver modules."""
    seen, todo = set(), [start]
    while todo:
        current = todo.pop()
        path = _module_file(current)
        if path is None:
            continue
        for imported in imports_of(path, PACKAGE.parent):
            if imported not in seen:
                seen.add(imported)
                todo.append(imported)
    return seen


def _forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))


@pytest.mark.parametrize("module", PLAN_AND_SEARCH)
def test_plan_and_search_modules_never_reach_scoring_or_oracle(module):
    assert _module_file(f"resolver.{module}") is not None, f"resolver.{module} does not exist"
    assert _forbidden(reachable(f"resolver.{module}")) == []


def test_the_import_walker_sees_lazy_and_relative_imports():
    # The run module imports scoring at the top and archive/reader lazily, in functions.
    found = reachable("resolver.run.runs")
    assert "resolver.metrics.scoring" in found and "resolver.plan.archive" in found
    assert "resolver.models.reader" in found
    # The CLI group loads its commands by name (lazily), so the walker starts at a command.
    assert "resolver.run.runs" in reachable("resolver.cli.run")


def test_no_resolver_module_imports_oracle():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        bad = [n for n in imports_of(path) if n == "oracle" or n.startswith("oracle.")]
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = bad
    assert offenders == {}


def _nonsense_copy(tmp_path: Path) -> Path:
    rows = orjson.loads(bundled_path().read_bytes())
    rows = rows["data"] if isinstance(rows, dict) else rows
    for row in rows:
        row["answers"] = [[f"zq nonsense {i}"] for i in range(len(row["answers"]))]
    path = tmp_path / "nonsense_gold.json"
    path.write_bytes(orjson.dumps(rows))
    return path


def _without_gold(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("gold", "em")} for r in rows]


def test_nonsense_gold_changes_no_prediction(tmp_path):
    real = execute(RunConfig(), results=tmp_path, run_id="real")
    fake = execute(RunConfig(data=(str(_nonsense_copy(tmp_path)),)), results=tmp_path,
                   run_id="nonsense")
    assert _without_gold(fake.predictions) == _without_gold(real.predictions)
    for name in ("traces.jsonl", "readout.jsonl"):
        assert (fake.path / name).read_bytes() == (real.path / name).read_bytes(), name
    # The gold did change, and scoring saw it: the check above is not vacuous.
    assert {r["gold"][0] for r in fake.predictions} != {r["gold"][0] for r in real.predictions}
    assert sum(r["em"] for r in real.predictions) > 0
    assert sum(r["em"] for r in fake.predictions) == 0


def test_two_runs_write_byte_identical_predictions(tmp_path):
    first = execute(RunConfig(), results=tmp_path)
    second = execute(RunConfig(), results=tmp_path)
    assert first.run_id != second.run_id
    for name in ("predictions.jsonl", "traces.jsonl", "readout.jsonl", "table.md", "table.tex"):
        assert (first.path / name).read_bytes() == (second.path / name).read_bytes(), name
    assert first.metrics["rows"] == second.metrics["rows"]
    assert len(loads_lines((first.path / "predictions.jsonl").read_bytes())) == 200
