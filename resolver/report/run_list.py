"""`factres runs`: every run folder of the results folder and of the repository's committed
results/, one entry each (id, where, label, mode, plan sets, data, sizes, pooled EM, date).

Each folder's meta.json and metrics.json are read and validated by the one reader
(`resolver.results.reader`); the predictions are not, so a long list stays quick (`factres
table` or `compare` check a run whole). A folder that does not read is passed over with the
reason, never dropped silently."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import PurePath

from resolver.errors import FactresError
from resolver.results import result_schema as schema
from resolver.results.reader import folder_names, read_json, read_meta
from resolver.results.result_schema import (
    METRICS_FILE,
    label_of,
    lookup_roots,
    run_mode,
)
from resolver.run.tables import DASH, Cell, Table, markdown_table, pct

RESULTS, COMMITTED = "results dir", "committed"


@dataclass(frozen=True)
class RunEntry:
    """One run as `factres runs` lists it (the `--json` objects have these keys)."""
    run_id: str
    where: str            # RESULTS (the results folder) or COMMITTED (the repository's results/)
    path: str
    label: str            # result_schema.label_of: --name, the system, else "factres <mode>"
    mode: str             # "search", "plain" or "imported"
    plan_sets: list[str]  # an imported run has none
    data: list[str]       # the row files' names
    sizes: list[str]      # "6k", "32k", ...
    em: float | None      # pooled EM over every question (None: unscored, the test split)
    split: str
    date: str             # meta.json created_utc, the day (YYYY-MM-DD)


def _entry(path, where: str) -> RunEntry:
    meta = read_meta(path)
    metrics = read_json(path / METRICS_FILE, schema.MetricsJson)
    pooled = [r for r in metrics["rows"] if r["pooled"] and r["kind"] == "all"]
    sizes = sorted({size for r in metrics["rows"] for size in r["sizes"]},
                   key=lambda s: (int(s[:-1]) if s[:-1].isdigit() else 1 << 30, s))
    return RunEntry(path.name, where, str(path), label_of(meta), run_mode(meta),
                    [r.get("set_id", "?") for r in meta.get("plan_sets", [])],
                    [PurePath(d).name for d in meta.get("data", [])], sizes,
                    pooled[0]["em"] if pooled else None, meta["split"],
                    str(meta.get("created_utc", ""))[:10])


def list_runs(results: str | None = None) -> tuple[list[RunEntry], list[str]]:
    """Every run folder under the results folder (`results`, else $FACTRES_RESULTS, else
    ./factres-results), then under the committed results/ (when that is another folder), each
    by id; and the folders passed over, each with why."""
    entries, skipped = [], []
    # lookup_roots: the results folder, then the committed results/ when that is another one
    for root, where in zip(lookup_roots(results), (RESULTS, COMMITTED)):
        for name in folder_names(root):
            try:
                entries.append(_entry(root / name, where))
            except FactresError as exc:
                skipped.append(f"{root / name}: {exc}")
    return entries, skipped


def runs_table(entries: list[RunEntry]) -> Table:
    """The list as a table (Markdown on screen), one group per place."""
    groups = []
    for where in (RESULTS, COMMITTED):
        rows = tuple((Cell(e.run_id), Cell(e.where), Cell(e.label), Cell(e.mode),
                      Cell(" + ".join(e.plan_sets) or DASH), Cell(", ".join(e.data) or DASH),
                      Cell("+".join(e.sizes) or DASH),
                      Cell("unscored" if e.em is None else pct(e.em), own=True),
                      Cell(e.date or DASH, own=True))
                     for e in entries if e.where == where)
        groups.append(rows)
    return Table("runs", "", ("run id", "where", "label", "mode", "plan sets", "data", "sizes",
                              "EM (pooled)", "date"), "lllllllrl", tuple(groups),
                 comment=False)


def render(entries: list[RunEntry]) -> str:
    return markdown_table(runs_table(entries))


def as_json(entries: list[RunEntry]) -> list[dict]:
    return [asdict(e) for e in entries]


__all__ = ["COMMITTED", "RESULTS", "RunEntry", "as_json", "list_runs", "render", "runs_table"]
