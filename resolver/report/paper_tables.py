"""The paper tables: `mab-fc`, `mab-nbest`, `mab-ceiling`, `mab-ref`, built from folders only.

Every figure comes from a file: score runs (meta.json + metrics.json), the oracle's N-best and
ceiling folders (nbest.json, ceiling.json; rendering what oracle wrote, never importing it) and
the references file (`resolver.report.references`). Nothing is typed by hand. Each table is a
`tables.Table`, rendered to Markdown and LaTeX by the one pair of renderers in `tables`.

- mab-fc: one row per score run (its folder's name, its plan sets, mode, reader and the split
  of its sources:
  "dev" for 6K, "test" for 32K-262K, "dev+test" for both, as imported runs record it); EM with
  its 95% interval at 6K, 32K, 64K and 262K for single-hop and multi-hop, the mean over the
  sizes the run has (its metrics.json pooled rows), and the run's commit, marked when the tree
  was dirty or the test run was admitted with --allow-dirty, or its configuration was not
  frozen. A plan set some of whose plans are lexicon fallbacks (its model calls failed) shows
  their count. Dev rows, then dev+test rows, then test rows, then other systems' runs imported
  by `factres score` (the system's name for plan sets, mode "imported"). Only MemoryAgentBench
  FactConsolidation sources (`factconsolidation_{sh,mh}_<size>`) fill cells: a run of other
  data is left out, with a note, and so is each other source of a run that has official ones
  (its row shows the official sources; a mean that would mix in the others stays empty).
- mab-nbest: per oracle N-best folder and multi-hop source, plan recall@N and success@N.
- mab-ceiling: one column group per size (from every ceiling folder given), rows per data
  family: multi-hop, single-hop and the store (both kinds under one policy); questions, those
  with a gold path, the latest-wins cap, the one-version-per-key optimum (marked when not
  proven optimal), and the contested keys.
- mab-ref: the references file (`resolver.report.references`), one group per protocol, each
  row with its source and place there; its stale-rate columns beside the score runs' own (one
  row per run given, after a rule). Marks: † a figure quoted second-hand, ‡ a vendor's claim,
  * an entry not checked against the transcription, ¶ a run made with --abstain-below (with
  the footnote mab-fc gives it); "—" no figure in the source, "n/r" a size or figure the
  source does not cover, "n/t" not transcribed.

Files are written atomically (a temporary file renamed over the old one, with the mode a new file
gets): tables are derived, so regenerating them replaces the previous ones. Folders are read
through `folders` (the one reader, `resolver.results.reader`, below it); names are escaped for each
format by `resolver.escape`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import resolver.escape as escape
from resolver.errors import InputError, first_few
from resolver.metrics.stats import McNemar
from resolver.report.compare import SIGNIFICANCE, Outcomes, cell_tests, outcomes
from resolver.report.figures import FIGURE_FILES
from resolver.report.folders import (
    CEILING,
    DEFAULT_OUT,
    FC_SOURCE,
    MH_SOURCE,
    NBEST,
    SCORE,
    Folder,
    Skipped,
    gather,
    run_labels,
    source_order,
)
from resolver.report.page_fit import fitted
from resolver.report.references import (
    SIZES,
    Reference,
    References,
    Source,
    compared_with_transcription,
    figure_text,
    load_references,
)
from resolver.results.derived import nbest_abstention
from resolver.results.reader import read_run
from resolver.results.result_schema import IMPORTED_KIND, label_of, results_root, run_kind
from resolver.run.protocol import DEV_SIZES, NEITHER, TEST_SIZES
from resolver.run.run_folder import ensure_writable, replace_file
from resolver.run.tables import (
    ABSTAINS,
    DASH,
    Cell,
    Note,
    Table,
    abstention,
    latex_table,
    markdown_table,
    pct,
)

TABLES = ("mab-fc", "mab-nbest", "mab-ceiling", "mab-ref")
FORMATS = {"md": (".md", markdown_table), "latex": (".tex", latex_table)}
PREVIEW_FILE = "preview.tex"
# Every file `factres tables` writes into its folder.
OUTPUT_FILES = tuple(f"{t}{suffix}" for t in TABLES for suffix, _ in FORMATS.values()) \
    + (PREVIEW_FILE,) + FIGURE_FILES

SIZE_LABEL = {s: s.upper() for s in SIZES}

DIRTY, UNFROZEN, UNCHECKED = "†", "‡", "*"
ABOVE, BELOW = "↑", "↓"        # mab-fc --baseline: significantly above or below the baseline
IMPORTED = IMPORTED_KIND       # a factres score run's kind is also its mode cell
PARTIAL = "§"                  # an imported run some questions have no prediction in
NOT_TRANSCRIBED = "n/t"


@dataclass
class Report:
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)     # what was skipped, and why
    warnings: list[str] = field(default_factory=list)  # folders that could not be read


# ---- mab-fc ---------------------------------------------------------------------------------
def _em_cell(row: dict | None, test: McNemar | None = None) -> Cell:
    """A metrics row's EM with its interval, marked ↑ or ↓ when `test` (the exact McNemar test
    against the baseline) finds the difference significant, in the direction of its discordant
    questions."""
    if row is None:
        return Cell(DASH)
    if row.get("em") is None:
        return Cell("unscored")
    ci = row.get("ci")
    mark = ""
    if test is not None and test.p < SIGNIFICANCE:
        mark = ABOVE if test.b_only > test.a_only else BELOW
    return Cell(pct(row["em"]), f"[{pct(ci[0])}, {pct(ci[1])}]" if ci else "", mark)


FALLBACKS = "fallbacks"
READER_FAILURES = "no answer"


def _sets_text(meta: dict) -> str:
    """The run's plan sets, each with its fallback count when a model planner's calls failed
    for some questions (their plans are the lexicon's; meta.json plan_sets[].fallback_count)."""
    names = [r.get("set_id", "?") + (f" ({FALLBACKS}: {r['fallback_count']})"
                                     if r.get("fallback_count") else "")
             for r in meta.get("plan_sets", [])]
    return " + ".join(names) or "?"


def _run_marks(meta: dict) -> str:
    protocol = meta.get("protocol") or {}
    marks = ""
    if (meta.get("git") or {}).get("dirty") or protocol.get("allow_dirty"):
        marks += DIRTY
    if meta.get("split") == "test" and not protocol.get("frozen"):
        marks += UNFROZEN
    return marks


def sources_split(sizes) -> str:
    """The split of a run's official sources, as an imported run's meta.json records it: "dev"
    (6K), "test" (32K, 64K, 262K), "neither" (another size), joined by "+" ("dev+test")."""
    def split(size: str) -> str:
        return "dev" if size in DEV_SIZES else "test" if size in TEST_SIZES else NEITHER
    return "+".join(sorted({split(size) for size in sizes})) or "?"


def other_sources(metrics: dict) -> list[str]:
    """The sources of a score run that are no official FactConsolidation source
    (`factconsolidation_{sh,mh}_<size>`): mab-fc has no column for them, and says so."""
    return sorted({row.get("source", "") for row in metrics.get("rows", [])
                   if not row.get("pooled") and not FC_SOURCE.match(row.get("source", ""))})


def fc_cells(metrics: dict) -> tuple[dict[tuple[str, str], dict], dict[str, dict]] | None:
    """A score run's FactConsolidation rows: ((size, kind) -> metrics row, kind -> pooled row);
    None when it has no FactConsolidation source."""
    cells: dict[tuple[str, str], dict] = {}
    other_kinds: set[str] = set()
    for row in metrics.get("rows", []):
        if row.get("pooled"):
            continue
        match = FC_SOURCE.match(row.get("source", ""))
        if match:
            cells[(match[2], match[1])] = row
        else:
            other_kinds.add(row.get("kind", ""))
    if not cells:
        return None
    kinds_present = {kind for _, kind in cells}
    pooled = {}
    for row in metrics.get("rows", []):
        kind = row.get("kind")
        # A pooled row is the mean over this run's sizes; it is shown only when every source
        # of its kind is FactConsolidation (else it would mix in other data).
        if row.get("pooled") and kind in kinds_present and kind not in other_kinds:
            pooled[kind] = row
    return cells, pooled


def run_label(folder: Folder) -> tuple[Cell, str, str, str]:
    """How the tables name a score run: (its name: plan sets, or an imported system's name,
    marked when predictions are missing; mode; reader; commit marks)."""
    meta, metrics = folder.data["meta"], folder.data["metrics"]
    if run_kind(meta) == IMPORTED_KIND:
        # Another system's predictions: its name where a resolver run names its plan sets. No
        # frozen configuration applies (nothing was resolved); the commit is factres's that
        # scored them.
        partial = PARTIAL if (meta.get("counts") or {}).get("missing") else ""
        marks = DIRTY if (meta.get("git") or {}).get("dirty") else ""
        return Cell(meta.get("system") or "?", mark=partial), IMPORTED, DASH, marks
    mode = (meta.get("config") or {}).get("mode") or "search"
    reader = meta.get("reader") or metrics.get("reader") or "none"
    failed = (meta.get("counts") or {}).get("reader_failures")
    if failed:
        # the reader's failed calls scored as empty answers: the row must say how many
        reader += f" ({READER_FAILURES}: {failed})"
    return Cell(_sets_text(meta)), mode, reader, _run_marks(meta)


def baseline_tests(folder: Folder, baseline: Outcomes | None) -> dict:
    """The exact McNemar tests of a score run against the baseline, per source and per pooled
    kind ("pooled sh", ...), on the questions both runs have; none for the baseline itself, an
    unscored run or no baseline."""
    run = folder.data.get("run_folder")
    if baseline is None or run is None or not run.scored \
            or run.path.resolve() == baseline.path.resolve():
        return {}
    return cell_tests(baseline, outcomes(run))


# mab-fc's columns besides the system and its EM cells, which `--columns` may show (their
# values are in a footnote otherwise): the run's folder id, plan sets, mode, reader, the split
# of its sources and the commit.
FC_META = ("run", "plan sets", "mode", "reader", "split", "commit")
FC_COLUMN_NAMES = {name.replace(" ", "-"): name for name in FC_META}
# The longest system name (characters) mab-fc sets in one column of a two-column page beside
# one size's two EM cells, and the longest it sets unwrapped across the page.
ONE_COLUMN_NAME, WIDE_NAME = 26, 40


@dataclass
class FcRow:
    """A mab-fc row before its columns are chosen: the label, the metadata (FC_META name ->
    cell), EM cells per (size, kind) and the means per kind, and the group it sits in."""
    label: Cell
    meta: dict[str, Cell]
    em: dict[tuple[str, str], Cell]
    mean: dict[str, Cell]
    group: str
    run: str = ""              # the folder's name ("" for a published reference)


def fc_row(folder: Folder, baseline: Outcomes | None = None,
           untested: list[str] | None = None) -> FcRow | None:
    """The mab-fc row of a score run, its EM cells marked against `baseline` if one is given
    (the cells with a figure but no question in common with it are added to `untested`);
    None when it has no FactConsolidation source."""
    meta, metrics = folder.data["meta"], folder.data["metrics"]
    found = fc_cells(metrics)
    if found is None:
        return None
    cells, pooled = found
    tests = baseline_tests(folder, baseline)
    run = folder.data.get("run_folder")
    tested = (baseline is not None and run is not None and run.scored
              and run.path.resolve() != baseline.path.resolve())
    if tested and untested is not None:
        # no arrow reads as "not significant": a cell that could not be tested is named
        untested += [f"{SIZE_LABEL[size]} {kind}" for size in SIZES for kind in ("sh", "mh")
                     if (row := cells.get((size, kind))) is not None
                     and row.get("em") is not None and row["source"] not in tests]
        untested += [f"mean {kind}" for kind in ("sh", "mh") if kind in pooled
                     and pooled[kind].get("em") is not None
                     and f"pooled {kind}" not in tests]
    commit = ((meta.get("git") or {}).get("commit") or "unknown")[:7]
    # the split of the sources the row shows (a dev-mode run over 32K rows is "test" data),
    # as imported runs record theirs
    split = sources_split(size for size, _ in cells)
    name, mode, reader, marks = run_label(folder)
    em = {}
    for size in SIZES:
        for kind in ("sh", "mh"):
            row = cells.get((size, kind))
            if row is not None:
                em[(size, kind)] = _em_cell(row, tests.get(row["source"]))
    mean = {kind: _em_cell(pooled[kind], tests.get(f"pooled {kind}")) for kind in pooled}
    # the label: --name, the imported system's name, else "factres <mode>"; a partial import's
    # mark travels with it
    label = Cell(label_of(meta), mark=name.mark if mode == IMPORTED else "")
    columns = {"run": Cell(folder.name), "plan sets": name if mode != IMPORTED else Cell(DASH),
               # a run that left its less sure answers unanswered is marked on its mode
               "mode": Cell(mode, mark=ABSTAINS if abstention(meta) else ""),
               "reader": Cell(reader), "split": Cell(split), "commit": Cell(commit, mark=marks)}
    return FcRow(label, columns, em, mean, IMPORTED if mode == IMPORTED else split,
                 folder.name)


def _group_order(group: str) -> tuple[int, str]:
    """mab-fc's row groups: dev runs, runs over dev and test sources, test runs, runs of other
    sizes, then other systems' imported runs."""
    order = {"dev": 0, "dev+test": 1, "test": 2, IMPORTED: 4}
    return order.get(group, 3), group


def abstention_footnote(abstained: list[tuple[str, tuple[str, int, int]]]) -> Note:
    """The ¶ footnote of mab-fc and mab-ref: each run (folder name, `abstention`) made with
    --abstain-below, its level and how many questions it left unanswered."""
    parts = [f"{ABSTAINS} made with --abstain-below: answers labelled below the level were "
             "left unanswered and count as wrong: "]
    for i, (name, (level, n, total)) in enumerate(abstained):
        parts += [name, f" below {level}, {n} of {total} questions"
                  + ("; " if i < len(abstained) - 1 else ".")]
    return Note(tuple(parts))


REFERENCES_TITLE = "published references: as their sources print them, not scored by factres"


def parse_labels(pairs: Sequence[str]) -> dict[str, str]:
    """`--label RUN=TEXT` pairs: run (an id or folder as given) -> its row's name in mab-fc."""
    out: dict[str, str] = {}
    for pair in pairs:
        run, sep, text = pair.partition("=")
        if not sep or not run.strip() or not text.strip():
            raise InputError(f"--label {pair!r}", expected="RUN=TEXT, a run given to tables "
                             "and the name its row shows")
        if run in out:
            raise InputError(f"--label names {run!r} twice", expected="one label per run")
        out[run] = text
    return out


def _folder_name(ref: str, folders: list[Folder], refs: tuple[str, ...]) -> str:
    """The folder name of the run a --label names: as given among RUN..., else as it is."""
    for given, folder in zip(refs, folders):
        if given == ref:
            return folder.name
    return Path(ref).name


def fc_columns(names: Sequence[str] = ()) -> tuple[str, ...]:
    """The metadata columns `--columns` names (FC_META, with "-" for a space, comma-separated
    or repeated), checked and in FC_META's order; none by default."""
    chosen = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in FC_COLUMN_NAMES]
    if unknown:
        raise InputError(f"unknown mab-fc column {unknown[0]!r}",
                         expected=", ".join(FC_COLUMN_NAMES))
    return tuple(m for m in FC_META if m.replace(" ", "-") in chosen)


def _runs_note(rows: list[FcRow], hidden: tuple[str, ...]) -> Note | None:
    """The footnote that says, per run row, the metadata no column shows (its folder id, plan
    sets, mode, reader, split, commit)."""
    runs = [r for r in rows if r.run]
    if not runs or not hidden:
        return None
    pieces: list[tuple[str, bool]] = [("Rows: ", False)]
    for i, row in enumerate(runs):
        pieces += [(row.label.text, True), (": ", False)]
        # what the row has (an imported run has no plan sets and no reader)
        said = [name for name in hidden if row.meta[name].text != DASH]
        for j, name in enumerate(said):
            cell = row.meta[name]
            pieces += [(f"{name} ", False), (cell.text, True),
                       (cell.mark + (", " if j < len(said) - 1 else ""), False)]
        pieces.append(("; " if i < len(runs) - 1 else ".", False))
    return note_of(pieces)


def note_of(pieces: Sequence[tuple[str, bool]]) -> Note:
    """A `Note` from (text, is user text) pieces: neighbours of one kind joined, so that its
    parts alternate factres's words and user text, starting with factres's."""
    parts: list[str] = [""]
    for text, user in pieces:
        if (len(parts) % 2 == 0) == user:      # the same kind as the last part
            parts[-1] += text
        else:
            parts.append(text)
    return Note(tuple(parts))


def fc_table(folders: list[Folder], notes: list[str], baseline: Outcomes | None = None,
             references: tuple[str, References, bool] | None = None,
             columns: Sequence[str] = (), labels: dict[str, str] | None = None
             ) -> Table | None:
    """mab-fc: one row per score run named by its label (`labels`, folder name -> text, first;
    then `result_schema.label_of`), grouped by split (imported runs last), with its EM cells at
    the sizes some row fills (the means when there are several sizes); the metadata columns
    `columns` (FC_META) beside them, the others in a footnote. With `baseline`, EM cells marked
    ↑/↓ where the exact McNemar test against it is significant; with `references` ((name to
    cite, the file, whether factres compared it with its transcription)), the published
    reference rows in a group of their own below the runs, under a heading row."""
    labels = labels or {}
    named, clashing = run_labels([f for f in folders if fc_cells(f.data["metrics"])], labels)
    if clashing:
        notes.append(f"mab-fc: {len(clashing)} label(s) name more than one run "
                     f"({', '.join(clashing)}): numbered (2), (3), ...; name them with "
                     "--label RUN=TEXT or `factres run --name`")
    rows: list[FcRow] = []
    used, untested, abstained = [], [], []
    for folder in folders:
        cells_untested: list[str] = []
        row = fc_row(folder, baseline, cells_untested)
        if row is None:
            notes.append(f"mab-fc: {folder.name} left out: no MemoryAgentBench "
                         "FactConsolidation source (factconsolidation_sh/mh_<size>)")
            continue
        row.label = replace(row.label, text=named[folder.name])
        if cells_untested:
            untested.append((row.label.text, cells_untested))
        if abstention(folder.data["meta"]):
            abstained.append((row.label.text, abstention(folder.data["meta"])))
        others = other_sources(folder.data["metrics"])
        if others:
            # said, never dropped silently: the row shows only the official sources, and a
            # mean that would mix in the others is left empty
            notes.append(f"mab-fc: {folder.name}: {len(others)} source"
                         f"{'s' if len(others) != 1 else ''} left out of its row, not an "
                         "official FactConsolidation source (factconsolidation_sh/mh_<size>): "
                         f"{', '.join(others)}")
        rows.append(row)
        used.append(folder.name)
    unknown_labels = sorted(set(labels) - set(used))
    if unknown_labels:
        raise InputError(f"--label names {unknown_labels[0]!r}, which is no run of mab-fc",
                         expected="RUN=TEXT with RUN one of the runs given: "
                                  + ", ".join(used))
    if not used:
        return None
    shown_meta = tuple(columns)
    hidden = tuple(m for m in FC_META if m not in shown_meta)
    for row in rows:
        # a mark of a column not shown goes on the label: the row still carries it
        row.label = replace(row.label, mark=row.label.mark + "".join(
            row.meta[m].mark for m in hidden))

    entries: list[Reference] = []
    if references is not None:
        shown, refs, compared = references
        entries = [e for e in refs.references if _has_em(e)]
    ref_rows = [_fc_reference_row(e) for e in entries]
    # the sizes some row fills, in order; the means only beside several sizes
    sizes = [size for size in SIZES
             if any(r.em.get((size, kind), Cell(DASH)).text not in NO_FIGURE
                    for r in rows + ref_rows for kind in ("sh", "mh"))]
    with_mean = len(sizes) > 1
    # up to two sizes: a column per size and kind (a row per run); more would not fit a page's
    # width with their intervals, so then a row per run and kind, a column per size
    by_kind = len(sizes) > 2

    def cells(row: FcRow) -> list[tuple[Cell, ...]]:
        head = [row.label] + [row.meta[m] for m in shown_meta]
        if by_kind:
            return [tuple((head if kind == "sh" else [Cell("")] * len(head)) + [Cell(kind)]
                          + [row.em.get((size, kind), Cell(DASH)) for size in sizes]
                          + ([row.mean.get(kind, Cell(DASH))] if with_mean else []))
                    for kind in ("sh", "mh")]
        out = head + [row.em.get((size, kind), Cell(DASH)) for size in sizes
                      for kind in ("sh", "mh")]
        if with_mean:
            out += [row.mean.get(kind, Cell(DASH)) for kind in ("sh", "mh")]
        return [tuple(out)]

    groups: dict[str, list[tuple[Cell, ...]]] = {}
    for row in rows:
        groups.setdefault(row.group, []).extend(cells(row))
    marks = "".join(r.meta["commit"].mark for r in rows)
    foot: list[str | Note] = [
        "EM: substring exact match (%), [95% bootstrap interval]"
        + ("; mean: over the sizes the run has; — : size not in the run." if with_mean
           else ".")]
    runs_note = _runs_note(rows, hidden)
    if runs_note is not None:
        foot.append(runs_note)
    if DIRTY in marks:
        foot.append(f"{DIRTY} run from a tree with uncommitted changes, or a test run "
                    "admitted with --allow-dirty.")
    if UNFROZEN in marks:
        foot.append(f"{UNFROZEN} test run from a configuration not frozen with factres freeze.")
    if abstained:
        foot.append(abstention_footnote(abstained))
    imported_rows = [r for r in rows if r.group == IMPORTED]
    if imported_rows:
        foot.append("imported: another system's predictions, scored by factres score against "
                    "the rows' gold (its commit: factres's).")
    if any(r.label.mark.startswith(PARTIAL) for r in imported_rows):
        foot.append(f"{PARTIAL} some questions have no prediction in the imported files: they "
                    "count as unanswered and wrong (listed in the run's meta.json).")
    if any(f"({READER_FAILURES}: " in r.meta["reader"].text for r in rows):
        foot.append(f"({READER_FAILURES}: N): questions whose reader call failed; they count "
                    "as unanswered.")
    if any(f"({FALLBACKS}: " in r.meta["plan sets"].text for r in rows):
        foot.append(f"({FALLBACKS}: N): questions whose plans from that set are the lexicon's, "
                    "because the model planner's call failed.")
    if baseline is not None:
        foot += _baseline_notes(baseline, used)
        if untested:
            parts = ["not tested against the baseline (no question in common with it, so no "
                     "arrow can show): "]
            for i, (name, cell_labels) in enumerate(untested):
                parts += [name, ": " + ", ".join(cell_labels)
                          + ("; " if i < len(untested) - 1 else ".")]
            foot.append(Note(tuple(parts)))
    ordered = [tuple(groups[g]) for g in sorted(groups, key=_group_order)]
    titles: tuple[str, ...] = ()
    sources = tuple(used)
    if entries:
        titles = ("",) * len(ordered) + (REFERENCES_TITLE,)
        ordered.append(tuple(line for r in ref_rows for line in cells(r)))
        foot += _fc_reference_notes(shown, refs, entries, compared, shown_meta)
        sources += (shown,)
    if by_kind:
        headers = ("system",) + shown_meta + ("kind",) + tuple(SIZE_LABEL[s] for s in sizes) \
            + (("mean",) if with_mean else ())
        header_groups: tuple[tuple[str, int], ...] = ()
        align = "l" * (2 + len(shown_meta)) + "r" * (len(sizes) + with_mean)
    else:
        headers = ("system",) + shown_meta + ("sh", "mh") * (len(sizes) + with_mean)
        header_groups = ((("", 1 + len(shown_meta)),) + tuple((SIZE_LABEL[s], 2) for s in sizes)
                         + ((("mean", 2),) if with_mean else ()))
        align = "l" * (1 + len(shown_meta)) + "r" * 2 * (len(sizes) + with_mean)
    # one column of a two-column page holds the system and one size for up to three systems
    # of names that fit beside the figures; more spans the page, where a long name wraps
    longest = max(len(r.label.text) for r in rows + ref_rows)
    wide = (len(sizes) > 1 or len(shown_meta) > 1 or bool(entries) or len(rows) > 3
            or longest > ONE_COLUMN_NAME)
    return Table("mab-fc", "MemoryAgentBench FactConsolidation: EM (%) per size, one row per "
                 "run", headers, align, tuple(ordered), header_groups, tuple(foot), sources,
                 group_titles=titles, float="table*" if wide else "table",
                 # a published reference's name is long: it wraps in a column of its own width
                 tex_align=(_WRAP.format("3.5cm") + align[1:])
                 if entries or longest > WIDE_NAME else "")


def _baseline_notes(baseline: Outcomes, used: list[str]) -> list[str | Note]:
    side = baseline.side
    shown = "" if side.name in used else "; its row is not in the table"
    return [f"{ABOVE} EM significantly above the baseline's, {BELOW} below it: the exact "
            f"McNemar test, two-sided, p below {SIGNIFICANCE}, on the questions both runs have "
            "(the direction of their discordant questions); a mean cell: the test stratified "
            "by size, on the discordant questions summed over the sizes both runs have.",
            Note(("baseline: ", side.name, " (", side.label, f"){shown}."))]


# ---- mab-fc: the published references -------------------------------------------------------
def _has_em(e: Reference) -> bool:
    """An entry with an EM figure (a size's or the pooled one), not only stale rates."""
    return any(not key.startswith("stale.") for key in e.figures())


def _reference_marks(e: Reference) -> str:
    return ({"quoted": QUOTED, "vendor": VENDOR}.get(e.provenance, "")
            + ("" if e.checked else UNCHECKED))


def _fc_reference_row(e: Reference) -> FcRow:
    """A reference's mab-fc row: its system (marked as mab-ref marks it), its protocol in the
    mode column, its reader, EM per size and mean as the source prints them, and its source
    and place where a run's commit stands."""
    figures = e.figures()
    em = {(size, kind): _covered(figures, f"{size}.{kind}") for size in SIZES
          for kind in ("sh", "mh")}
    mean = {kind: _covered(figures, f"pooled.{kind}") for kind in ("sh", "mh")}
    meta = {"run": Cell(DASH), "plan sets": Cell(DASH), "mode": Cell(e.protocol),
            "reader": Cell(e.reader), "split": Cell(DASH),
            "commit": Cell(f"{e.source}, {e.place}")}
    return FcRow(Cell(e.system, mark=_reference_marks(e)), meta, em, mean, "references")


def _fc_reference_notes(shown: str, refs: References, entries: list[Reference],
                        compared: bool, columns: Sequence[str] = FC_META) -> list[str | Note]:
    """What the reference rows of mab-fc are, their marks (on a reference's name), protocols
    and sources, and where their figures were copied from. `shown`: the file's name to cite;
    `columns`: the metadata columns shown (a reference's protocol, reader and source go in the
    mode, reader and commit columns, else in a note). Everything the references file says is
    user text (`Note` parts), escaped per format."""
    where = [text for column, text in (("mode", "mode: the reference's protocol"),
                                       ("commit", "commit: the source and the place in it"))
             if column in columns]
    foot: list[str | Note] = [
        Note(("published references (the last group): EM (%) as each source prints it, read "
              "from ", shown, ", not computed by factres (no interval, no test against a "
              "baseline); mean: the source's pooled figure"
              + "".join(f"; {w}" for w in where) + "."))]
    missing = [c for c in ("mode", "reader", "commit") if c not in columns]
    if missing:
        pieces: list[tuple[str, bool]] = [("References: ", False)]
        for i, e in enumerate(entries):
            said = {"mode": ("protocol ", e.protocol), "reader": ("reader ", e.reader),
                    "commit": ("source ", f"{e.source}, {e.place}")}
            pieces += [(e.system, True), (": ", False)]
            for j, column in enumerate(missing):
                word, value = said[column]
                pieces += [(word, False), (value, True),
                           (", " if j < len(missing) - 1 else "", False)]
            pieces.append(("; " if i < len(entries) - 1 else ".", False))
        foot.append(note_of(pieces))
    foot += [
        f"In the reference rows, — : the source prints no figure (a dash or an empty "
        f"cell); {NOT_COVERED}: a size or figure the source does not cover; "
        f"{NOT_TRANSCRIBED}: not transcribed."]
    quoted = [e for e in entries if e.provenance == "quoted"]
    if quoted:
        foot.append(Note((f"{QUOTED} on a reference's name: quoted second-hand, ",
                          _names(e.quoted_from for e in quoted), "'s figures as source ",
                          _names(e.source for e in quoted), " quotes them.")))
    vendor = [e for e in entries if e.provenance == "vendor"]
    if vendor:
        foot.append(Note((f"{VENDOR} on a reference's name: a vendor's claim, ",
                          _names(e.quoted_from for e in vendor), "'s own figures, quoted in "
                          "source ", _names(e.source for e in vendor), ".")))
    if any(not e.checked for e in entries):
        foot.append(f"{UNCHECKED} on a reference's name: not checked against the "
                    "transcription.")
    foot += [Note(("protocol ", p, ": ", refs.protocols[p], "."))
             for p in dict.fromkeys(e.protocol for e in entries)]
    used_sources = list(dict.fromkeys([e.source for e in entries]
                                      + [e.quoted_from for e in entries if e.quoted_from]))
    foot += [Note(("source ", s, ": ", _source_text(s, refs.sources[s]), "."))
             for s in used_sources]
    foot.append(_transcription_note("Reference figures", refs, compared))
    return foot


def _transcription_note(what: str, refs: References, compared: bool) -> Note:
    """Where the figures were copied from, and who compared them with it: factres, when the
    transcription is here (references.check_figures), else only the file's author."""
    head = (f"{what} copied from ", refs.transcription.file,
            f" (sha256 {refs.transcription.sha256[:12]})")
    if compared:
        return Note(head + (" and compared with it cell by cell, not with the papers "
                            "themselves.",))
    return Note(head + ("; an entry marked checked was compared with it by the file's author, "
                        "not by factres (the transcription is not here: only the figures read "
                        "from text were compared, with their quotes).",))


# ---- mab-nbest ------------------------------------------------------------------------------
def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}" if total else DASH


def nbest_table(folders: list[Folder], notes: list[str]) -> Table | None:
    groups, used, sets, abstained = [], [], set(), []
    for folder in folders:
        run = folder.data.get("run") or folder.name
        # a run made with --abstain-below: success@N judges the answer selected before the
        # abstention, which its own EM (mab-fc) counts as unanswered
        abstention = nbest_abstention(folder.data)
        mark = ABSTAINS if abstention else ""
        sources = {s: v for s, v in (folder.data.get("sources") or {}).items()
                   if MH_SOURCE.search(s)}
        if not sources:
            notes.append(f"mab-nbest: {folder.name} left out: no multi-hop source")
            continue
        for source, summary in sorted(sources.items(), key=lambda kv: source_order(kv[0])):
            total = summary["questions"]
            rows = []
            for r in summary["by_n"]:
                sets.add(r["set"])
                rows.append((Cell(run, mark=mark), Cell(source), Cell(str(r["n"])),
                             Cell(r["set"]),
                             Cell(str(total)), Cell(_share(r["plan_recall"], total)),
                             Cell(_share(r["success"], total))))
            groups.append(tuple(rows))
        used.append(folder.name)
        if abstention:
            abstained.append((run, *abstention))
    if not used:
        return None
    foot: list[str | Note] = [
        "plan recall@N: some plan of the first N sets reaches the gold; success@N: the "
        "answer selected among them is right (% of questions)."]
    if abstained:
        parts = [f"{ABSTAINS} made with --abstain-below: success@N judges the answer the "
                 "resolver selected, also where the run abstained from it (its EM, in mab-fc, "
                 "counts those questions as unanswered): "]
        for i, (run, level, n) in enumerate(abstained):
            parts += [run, (f" below {level}" if level else " (its level not recorded)")
                      + (f", {n} questions abstained from"
                                                if n is not None else "")
                      + ("; " if i < len(abstained) - 1 else ".")]
        foot.append(Note(tuple(parts)))
    if "search" in sets:
        foot.append("search: the search's own paths through the relations the question cues "
                    "(no plan set).")
    return Table("mab-nbest", "Plan recall@N against execution success@N, multi-hop",
                 ("run", "source", "N", "added set", "questions", "plan recall@N",
                  "success@N"), "llrlrrr", tuple(groups), (), tuple(foot), tuple(used),
                 float="table*",
                 # run ids and source names wrap (after their underscores) beside the figures
                 tex_align=_WRAP.format("3.1cm") + _WRAP.format("3.1cm") + "rlrrr")


# ---- mab-ceiling ----------------------------------------------------------------------------
def contested_by_source(payload: dict) -> dict[str, int]:
    """Contested keys per source: keys some question of the source needs in one version while
    another question needs another. Read from per_source when the oracle wrote it there, else
    counted from the contested_keys list and the question rows."""
    per = payload.get("per_source") or {}
    if per and all("contested_keys" in v for v in per.values()):
        return {s: v["contested_keys"] for s, v in per.items()}
    source_of = {r["qid"]: r["source"] for r in payload.get("rows", [])}
    out = {s: 0 for s in per}
    for key in payload.get("contested_keys", []):
        touched = {source_of.get(q) for n in key["needed"] for q in n["questions"]}
        for source in touched - {None}:
            out[source] = out.get(source, 0) + 1
    return out


CEILING_KINDS = (("mh", "multi-hop"), ("sh", "single-hop"), ("store", "both (one store)"))
CEILING_COLUMNS = ("n", "gold path", "latest wins", "optimum", "contested keys")
NOT_PROVEN = "§"
_SOURCE_PARTS = re.compile(r"\A(?:(?P<family>.*?)_)?(?P<kind>sh|mh)_(?P<size>\d+k)\Z")


def _size_order(size: str) -> tuple[int, str]:
    return (SIZES.index(size), "") if size in SIZES else (1 << 30, size)


def _ceiling_cell(entry: dict, name: str) -> dict:
    return {"n": entry["questions"], "gold path": entry["with_gold_path"],
            "latest wins": entry["latest_wins"], "optimum": entry["optimal"],
            "contested keys": entry[name], "proven": entry.get("status", "OPTIMAL") == "OPTIMAL"}


def ceiling_entries(folder: Folder, notes: list[str]) -> dict[tuple[str, str, str], dict]:
    """(data family, kind, size) -> the figures of one ceiling folder: one entry per source
    ("factconsolidation_mh_6k": family "factconsolidation", kind "mh", size "6k") and one per
    haystack holding several sources (kind "store": its single-hop and multi-hop questions
    under their one best policy). A folder written before the oracle solved each haystack
    alone (no per_haystack) counts only when it holds one size: its optimum then is the store's."""
    data = folder.data
    contested = contested_by_source(data)
    entries, families = {}, {}
    for source, v in (data.get("per_source") or {}).items():
        match = _SOURCE_PARTS.match(source)
        if not match:
            notes.append(f"mab-ceiling: {folder.name}: source {source} left out: its name "
                         "gives no kind and size (<data>_sh|mh_<size>)")
            continue
        family = match["family"] or ""
        families[source] = family
        entries[(family, match["kind"], match["size"])] = _ceiling_cell(
            dict(v, contested=contested.get(source, 0)), "contested")
    if not entries:
        notes.append(f"mab-ceiling: {folder.name} left out: no source of a known kind and size")
        return {}
    haystacks = data.get("per_haystack")
    if haystacks is None:
        if len({size for _, _, size in entries}) > 1:
            notes.append(f"mab-ceiling: {folder.name} left out: its optimum was solved across "
                         "haystacks (written before per-haystack solving); run factres oracle "
                         "ceiling again")
            return {}
        if len(entries) > 1:
            (size,) = {size for _, _, size in entries}
            family = "+".join(sorted(set(families.values())))
            total = dict(data, contested=len(data.get("contested_keys") or []))
            entries[(family, "store", size)] = _ceiling_cell(total, "contested")
        return entries
    for summary in haystacks.values():
        mine = [families[s] for s in summary["sources"] if s in families]
        if len(mine) > 1:
            entries[("+".join(sorted(set(mine))), "store", summary["size"])] = _ceiling_cell(
                summary, "contested_keys")
    return entries


def ceiling_table(folders: list[Folder], notes: list[str]) -> Table | None:
    """One column group per size; rows per data family: multi-hop, single-hop and the store
    (both kinds under one policy). Sizes and rows come from every folder given; a cell two
    folders both fill is taken from the first, with a note."""
    cells: dict[tuple[str, str, str], dict] = {}
    used = []
    for folder in folders:
        entries = ceiling_entries(folder, notes)
        if not entries:
            continue
        for key, entry in entries.items():
            if key in cells:
                notes.append(f"mab-ceiling: {folder.name}: {key[0] or 'data'} {key[1]} "
                             f"{key[2]} already given by an earlier folder; that one kept")
                continue
            cells[key] = entry
        used.append(folder.name)
    if not cells:
        return None
    sizes = sorted({size for _, _, size in cells}, key=_size_order)
    families = sorted({family for family, _, _ in cells})
    # one row per size and kind, a group per size: as many columns for four sizes as for one
    groups = []
    for size in sizes:
        rows = []
        for family in families:
            for kind, label in CEILING_KINDS:
                entry = cells.get((family, kind, size))
                if entry is None:
                    continue
                row = [Cell(SIZE_LABEL.get(size, size.upper()))]
                if len(families) > 1:
                    row.append(Cell(family or DASH))
                row.append(Cell(label))
                row += [Cell(str(entry[c]), mark="" if c != "optimum" or entry["proven"]
                             else NOT_PROVEN) for c in CEILING_COLUMNS]
                rows.append(tuple(row))
        groups.append(tuple(rows))
    foot = ["Questions a store keeping one version per key can answer (n: questions; gold "
            "path: questions with one): latest wins keeps the latest version, optimum the "
            "proven best choice; one store per haystack, whose single-hop and multi-hop "
            "questions share its choice.",
            "contested keys: keys two questions of the store need in different versions, "
            "counted for a kind when one of its questions needs one."]
    if len(families) == 1:
        foot.insert(0, Note(("data: ", families[0] or DASH, ".")))
    if any(not e["proven"] for e in cells.values()):
        foot.append(f"{NOT_PROVEN} not proven optimal: the solver's time limit came first; the "
                    "best policy found (its bound is in ceiling.json).")
    headers = ("size",) + (("data",) if len(families) > 1 else ()) + ("questions",) \
        + CEILING_COLUMNS
    return Table("mab-ceiling", "Ceiling of one-version-per-key stores, per size", headers,
                 "l" * (len(headers) - len(CEILING_COLUMNS)) + "r" * len(CEILING_COLUMNS),
                 tuple(groups), (), tuple(foot), tuple(used), float="table*")


# ---- mab-ref --------------------------------------------------------------------------------
QUOTED, VENDOR = "†", "‡"      # mab-ref's own marks (in mab-fc they mean other things)
NOT_COVERED = "n/r"
NO_FIGURE = (DASH, NOT_COVERED, NOT_TRANSCRIBED)   # a cell that makes no size column appear
REF_SIZE_COLUMNS = ("sh", "mh", "stale")
# factres's own stale denominator, as resolver/metrics/scoring.py (`staleness`) counts it.
FACTRES_STALE = ("single-hop questions whose gold is the final value of their own key (the "
                 "winner's hop, else a one-hop rule plan) with more than one version")
FACTRES_PROTOCOL, IMPORTED_PROTOCOL = "factres", "imported"


def _figure_cell(value: object) -> Cell:
    text = figure_text(value)
    if text is not None:
        return Cell(text)
    return Cell(NOT_TRANSCRIBED) if value is None else Cell(DASH)


def _covered(figures: dict, key: str) -> Cell:
    """The figure `key` ("6k.sh", "stale.64k", ...), or "n/r" when the source does not give it."""
    return _figure_cell(figures[key]) if key in figures else Cell(NOT_COVERED)


def _reference_row(e: Reference) -> tuple[Cell, ...]:
    row = [Cell(e.system, mark=_reference_marks(e)), Cell(e.reader), Cell(e.protocol)]
    figures = e.figures()
    for size in SIZES:
        row += [_covered(figures, f"{size}.sh"), _covered(figures, f"{size}.mh"),
                _covered(figures, f"stale.{size}")]
    row += [_covered(figures, "pooled.sh"), _covered(figures, "pooled.mh"),
            Cell(f"{e.source}, {e.place}")]
    return tuple(row)


def _run_figure(row: dict | None) -> Cell:
    if row is None:
        return Cell(NOT_COVERED)
    return Cell("unscored") if row.get("em") is None else Cell(pct(row["em"]))


def _run_stale(row: dict | None) -> Cell:
    if row is None:
        return Cell(NOT_COVERED)
    if row.get("em") is None:
        return Cell("unscored")
    if row.get("stale_rate") is None:
        return Cell(DASH)            # no question in the denominator
    return Cell(pct(row["stale_rate"]), f"({row['stale']}/{row['stale_eligible']})")


def run_reference_row(folder: Folder, label: str | None = None) -> tuple[Cell, ...] | None:
    """A score run's mab-ref row, named `label` (else its label, `label_of`, which says its
    reader): EM per size and its stale rate with stale/eligible, beside the published
    figures; None when it has no FactConsolidation source."""
    found = fc_cells(folder.data["metrics"])
    if found is None:
        return None
    cells, pooled = found
    name, mode, _, _ = run_label(folder)
    name = Cell(label or label_of(folder.data["meta"]),
                mark=name.mark if mode == IMPORTED else "")
    reader = DASH                     # the label names it
    protocol = IMPORTED_PROTOCOL if mode == IMPORTED else FACTRES_PROTOCOL
    if abstention(folder.data["meta"]):
        # its EM counts the questions it abstained from as wrong: marked as mab-fc marks it,
        # or it would read as the same system as a run that answered them (verification W10)
        name = replace(name, mark=name.mark + ABSTAINS)
    row = [name, Cell(reader), Cell(protocol)]
    for size in SIZES:
        sh, mh = cells.get((size, "sh")), cells.get((size, "mh"))
        row += [_run_figure(sh), _run_figure(mh), _run_stale(sh)]
    row += [_run_figure(pooled.get("sh")), _run_figure(pooled.get("mh")), Cell(folder.name)]
    return tuple(row)


def _source_text(source_id: str, source: Source) -> str:
    parts = [source.name] if source.name not in (source_id, source.title) else []
    if source.kind == "vendor":
        parts.append("vendor page")
    if source.title:
        parts.append(f'"{source.title}"')
    if source.authors:
        parts.append(source.authors)
    if source.arxiv:
        parts.append(f"arXiv:{source.arxiv}")
    if source.url:
        parts.append(source.url)
    if source.unlocated:
        parts.append(source.unlocated)
    return ", ".join(parts)


def _names(ids) -> str:
    ids = list(dict.fromkeys(ids))
    return ", ".join(ids[:-1]) + " and " + ids[-1] if len(ids) > 1 else ids[0]


def _reference_notes(refs: References, runs: list[tuple[Cell, ...]], compared: bool,
                     abstained: list[tuple[str, tuple[str, int, int]]] = ()
                     ) -> list[str | Note]:
    entries = refs.references
    foot: list[str | Note] = [
        "EM: substring exact match (%) as the source prints it; stale: stale rate (%, "
        "single-hop); mean: the source's pooled figure (a factres run's: the mean over its "
        "sizes).",
        f"— : the source prints no figure (a dash or an empty cell); {NOT_COVERED}: not "
        f"covered by the source (a size or figure it does not give); {NOT_TRANSCRIBED}: not "
        "transcribed."]
    used_protocols = list(dict.fromkeys(e.protocol for e in entries))
    foot += [Note(("protocol ", p, ": ", refs.protocols[p], ".")) for p in used_protocols]
    used_sources = list(dict.fromkeys([e.source for e in entries]
                                      + [e.quoted_from for e in entries if e.quoted_from]))
    foot += [Note(("source ", s, ": ", _source_text(s, refs.sources[s]), "."))
             for s in used_sources]
    quoted = [e for e in entries if e.provenance == "quoted"]
    if quoted:
        foot.append(Note((f"{QUOTED} quoted second-hand: ",
                          _names(e.quoted_from for e in quoted), "'s figures as source ",
                          _names(e.source for e in quoted), " quotes them.")))
    vendor = [e for e in entries if e.provenance == "vendor"]
    if vendor:
        foot.append(Note((f"{VENDOR} vendor claim: ", _names(e.quoted_from for e in vendor),
                          "'s own figures, quoted in source ",
                          _names(e.source for e in vendor), ".")))
    if any(not e.checked for e in entries):
        foot.append(f"{UNCHECKED} not checked against the transcription.")
    denominators = list(dict.fromkeys(e.stale.denominator for e in entries if e.stale))
    for d in denominators:
        den = refs.stale_denominators[d]
        counts = ", ".join(f"{n} at {SIZE_LABEL[size]}" for size, n in
                           sorted(den.n.items(), key=lambda kv: SIZES.index(kv[0])))
        foot.append(Note(("Stale denominator of source ", den.source, ": ", den.definition,
                          f" (n = {counts}).")))
    if runs:
        foot.append(f"protocol {FACTRES_PROTOCOL}: runs of this repository; protocol "
                    f"{IMPORTED_PROTOCOL}: other systems' predictions scored by factres score. "
                    "EM from their metrics.json (intervals in mab-fc); stale rate with "
                    "(stale/eligible) questions.")
        if denominators:
            foot.append(f"factres's stale denominator: {FACTRES_STALE}; another "
                        "definition, so the counts differ (docs/resolving.md: Stale denominators).")
        if abstained:
            foot.append(abstention_footnote(list(abstained)))
    foot.append(_transcription_note("Figures", refs, compared))
    for u in refs.untranscribed:
        where = _source_text(u.source, refs.sources[u.source])
        foot.append(Note(("Not transcribed: ", u.what, " (", where, "): ", u.why, ".")))
    return foot


def ref_table(path: str | Path | None = None, folders: Sequence[Folder] = (),
              labels: dict[str, str] | None = None,
              notes: list[str] | None = None) -> Table | None:
    """The published figures, one group per protocol (in the file's order), then the score runs
    given (one row each, after a rule), their stale rates beside the published ones. None when
    the file has no entry: runs alone are no reference table."""
    shown, refs = load_references(path)
    if not refs.references:
        return None
    compared = compared_with_transcription(refs, path)
    runs, used, abstained = [], [], []
    named, _ = run_labels(list(folders), labels)
    for folder in folders:
        if not folder.data["metrics"].get("scored", True):
            # a test run's EM was never computed: a row of "unscored" compares nothing
            if notes is not None:
                notes.append(f"mab-ref: {folder.name} left out: unscored (a test run)")
            continue
        row = run_reference_row(folder, named.get(folder.name))
        if row is not None:
            runs.append(row)
            used.append(folder.name)
            if abstention(folder.data["meta"]):
                abstained.append((named[folder.name], abstention(folder.data["meta"])))
    by_protocol: dict[str, list[tuple[Cell, ...]]] = {}
    for e in refs.references:
        by_protocol.setdefault(e.protocol, []).append(_reference_row(e))
    # the protocol heads its group (a column of its own would repeat it on every row), the
    # reader or model follows the system's name
    groups = [tuple(_with_reader(row) for row in rows) for rows in by_protocol.values()]
    titles = [f"protocol {p}" for p in by_protocol]
    if runs:
        groups.append(tuple(_with_reader(row) for row in runs))
        titles.append(f"runs scored by factres (protocols {FACTRES_PROTOCOL} and "
                      f"{IMPORTED_PROTOCOL})")
    headers = ("system (reader/model)",) + REF_SIZE_COLUMNS * len(SIZES) + ("sh", "mh", "source")
    spans = [("", 1)] + [(SIZE_LABEL[s], len(REF_SIZE_COLUMNS)) for s in SIZES] \
        + [("mean", 2), ("", 1)]
    # a figure column no row fills (every cell "n/r", "—" or "n/t") is left out
    rows = [row for group in groups for row in group]
    keep = [i for i in range(len(headers))
            if i == 0 or i == len(headers) - 1 or any(r[i].text not in NO_FIGURE for r in rows)]
    start, kept_spans = 0, []
    for label, span in spans:
        n = sum(1 for i in keep if start <= i < start + span)
        if n:
            kept_spans.append((label, n))
        start += span
    groups = [tuple(tuple(row[i] for i in keep) for row in group) for group in groups]
    dropped = [f"{_span_of(spans, i)} {headers[i]}".strip() for i in range(len(headers))
               if i not in keep]
    foot = _reference_notes(refs, runs, compared, abstained)
    if dropped:
        foot.append(f"Columns no row fills are left out: {', '.join(dropped)}.")
    figures = "r" * (len(keep) - 2)
    return Table("mab-ref", "Published reference points, FactConsolidation EM and stale rate "
                 "(%), grouped by protocol, with factres's runs",
                 tuple(headers[i] for i in keep), "l" + figures + "l", tuple(groups),
                 tuple(kept_spans), tuple(foot), (shown, *used), group_titles=tuple(titles),
                 float="table*",
                 # names and sources wrap in columns of their own width: the figures fit
                 # the page's width beside them
                 tex_align=_WRAP.format("3.3cm") + figures + _WRAP.format("2.4cm"),
                 tex_size=r"\scriptsize")


def _with_reader(row: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """A mab-ref row (system, reader/model, protocol, figures...) as the table shows it: the
    reader or model in brackets after the system's name, the protocol left to the group."""
    system, reader = row[0], row[1].text
    text = system.text if reader in ("", "none", DASH) else f"{system.text} ({reader})"
    return (replace(system, text=text),) + row[3:]


_WRAP = r">{{\raggedright\arraybackslash}}p{{{}}}"   # a column whose text wraps (array)


def _span_of(spans: list[tuple[str, int]], index: int) -> str:
    """The header group (a size, "mean") column `index` sits under."""
    start = 0
    for label, span in spans:
        if start <= index < start + span:
            return label
        start += span
    return ""


# ---- building and writing -------------------------------------------------------------------
def build(folders: list[Folder], names: tuple[str, ...] = TABLES, explicit: bool = False,
          references: str | Path | None = None, baseline: Outcomes | None = None,
          with_references: bool = False, columns: Sequence[str] = (),
          labels: dict[str, str] | None = None) -> tuple[list[Table], list[str]]:
    """The tables named (in TABLES order) and notes on what was left out. A table without
    input is skipped with a note, or, when asked for explicitly, an InputError. `baseline`
    marks mab-fc's significant cells; `with_references` adds the references to mab-fc;
    `columns` (FC_META names) are mab-fc's metadata columns, `labels` (run -> text) its row
    names."""
    notes: list[str] = []
    by_kind = {kind: [f for f in folders if f.kind == kind] for kind in (SCORE, NBEST, CEILING)}
    refs = None
    if with_references:
        shown, loaded = load_references(references)
        refs = (shown, loaded, compared_with_transcription(loaded, references))
    # name -> (builder, the folder it needs, how to make one)
    builders = {"mab-fc": (lambda: fc_table(by_kind[SCORE], notes, baseline, refs, columns,
                                            labels),
                           "score run", "make one with `factres run` or `factres score`"),
                "mab-nbest": (lambda: nbest_table(by_kind[NBEST], notes),
                              "oracle nbest folder (nbest.json)",
                              "make one with `factres oracle nbest RUN` (it writes "
                              "<results>/oracle-nbest-RUN/) and name it"),
                "mab-ceiling": (lambda: ceiling_table(by_kind[CEILING], notes),
                                "oracle ceiling folder (ceiling.json)",
                                "make one with `factres oracle ceiling [--data ROWS]` (it writes "
                                "<results>/oracle-ceiling-<sizes>/) and name it"),
                "mab-ref": (lambda: ref_table(references, by_kind[SCORE], labels, notes),
                            "references entry",
                            "see --references")}
    unknown = [n for n in names if n not in builders]
    if unknown:
        raise InputError(f"unknown table {unknown[0]!r}", expected=", ".join(TABLES))
    out = []
    for name in TABLES:
        if name not in names:
            continue
        build_one, needs, how = builders[name]
        table = build_one()
        if table is None:
            message = f"{name}: no {needs} to build it from ({how})"
            if name == "mab-fc" and by_kind[SCORE]:
                # score runs there are, none of the benchmark's: say why, not "make one"
                runs = by_kind[SCORE]
                sources = sorted({s for f in runs for s in other_sources(f.data["metrics"])})
                needs = "score run of an official FactConsolidation source"
                message = (f"{name}: no {needs} (factconsolidation_sh/mh_<size>) to build it "
                           f"from: {first_few(f.name for f in runs)} "
                           f"{'holds' if len(runs) == 1 else 'hold'} only "
                           f"{first_few(sources)}, in neither split")
            if explicit:
                raise InputError(f"table {message}", expected=f"at least one {needs}")
            notes.append(f"{message}; not written")
            continue
        # laid out to fit its place on a two-column page: wrapped, smaller, scaled or broken
        # across pages when it would not (page_fit.py)
        table, note = fitted(table)
        out.append(table)
        notes += [note] * bool(note)
    return out, notes


# The preview's preamble: a two-column paper (11 pt, 6.3 in of text in two columns of 3.03 in,
# as ACL's template sets them). Names keep their Unicode (escape.latex leaves UTF-8 as it is):
# under lualatex or xelatex fontspec sets every character its font has; under pdflatex a
# character no loaded font encoding has (CJK, emoji, ...) prints as "?" instead of stopping the
# build (the error macro of LaTeX's UTF-8 input is redefined), so any name compiles either way.
PREVIEW_PREAMBLE = (r"\documentclass[11pt,twocolumn]{article}", r"\usepackage{iftex}",
                    r"\ifPDFTeX", r"  \usepackage[T1]{fontenc}", r"  \usepackage[utf8]{inputenc}",
                    r"  \makeatletter\def\UTFviii@undefined@err#1{?}\makeatother", r"\else",
                    r"  \usepackage{fontspec}", r"\fi",
                    r"\usepackage[letterpaper,textwidth=6.3in,textheight=9.25in,"
                    r"columnsep=0.24in]{geometry}", r"\usepackage{booktabs}",
                    r"\usepackage{array}", r"\usepackage{longtable}",
                    r"\usepackage{graphicx}")


def preview_document(tables: list[Table]) -> str:
    """A two-column paper that \\input{}s every table as it is written (each .tex is its own
    float: `table` in one column, `table*` across both, or a `longtable` on pages of one
    column when it is taller than a page; laid out to fit by page_fit.py): compile it
    (pdflatex, lualatex or xelatex) to see the tables as a paper shows them; an "Overfull
    \\hbox" or "Float too large" in its log would be a table wider or taller than its
    place."""
    lines = ["% compile with pdflatex (a character its fonts lack prints as ?), or lualatex or "
             "xelatex", *PREVIEW_PREAMBLE, r"\begin{document}"]
    for t in tables:
        lines += [r"\input{" + t.table_id + ".tex}"]
    # text for the one-column floats to sit beside
    lines += [r"The tables: " + ", ".join(r"Table~\ref{tab:" + t.table_id + "}"
                                          for t in tables) + ".", r"\end{document}"]
    return "\n".join(lines) + "\n"


def write(tables: list[Table], out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Write `<id>.md` and/or `<id>.tex` per table (and preview.tex with LaTeX) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:
        for fmt in formats:
            suffix, render = FORMATS[fmt]
            path = out / f"{table.table_id}{suffix}"
            replace_file(path, render(table))
            written.append(path)
    if "latex" in formats and tables:
        path = out / PREVIEW_FILE
        replace_file(path, preview_document(tables))
        written.append(path)
    return written


def make_tables(refs: tuple[str, ...] = (), *, results: str | Path | None = None,
                out: str | Path | None = None, formats: tuple[str, ...] = ("md", "latex"),
                names: tuple[str, ...] = (), references: str | Path | None = None,
                plot: bool = False, baseline: str | Path | None = None,
                with_references: bool = False, columns: Sequence[str] = (),
                labels: Sequence[str] = ()) -> Report:
    """`factres tables`: gather the folders, build the tables (all, or `names`, which must
    then each have input), write them, and with `plot` the figures. `baseline` (a run id or
    folder, which must be scored) marks mab-fc's cells that differ from it significantly;
    `with_references` adds the published references to mab-fc; `columns` chooses mab-fc's
    metadata columns (`fc_columns`), `labels` ("RUN=TEXT") names its rows."""
    chosen = fc_columns(columns)
    named = parse_labels(labels)
    target = Path(out) if out is not None else results_root(results) / DEFAULT_OUT
    # before any folder is read
    ensure_writable(target, "a writable tables folder (--out, else <results dir>/tables)")
    # the baseline is read and checked before the folders, and before anything is written
    base = outcomes(read_run(baseline, results)) if baseline is not None else None
    skipped: list[Skipped] = []
    folders = gather(refs, results, skipped)
    given = {_folder_name(ref, folders, refs): text for ref, text in named.items()}
    tables, notes = build(folders, names or TABLES, explicit=bool(names), references=references,
                          baseline=base, with_references=with_references, columns=chosen,
                          labels=given)
    # what the reader could not check of a run (its data not found, no traces): said
    read_notes = [n for f in folders if f.kind == SCORE for n in f.data["run_folder"].notes]
    report = Report(write(tables, target, formats),
                    [f"skipped {s.name}: {s.reason}" for s in skipped if s.foreign]
                    + read_notes + notes,
                    [f"skipped {s.name}: {s.reason}" for s in skipped if not s.foreign])
    if plot:
        from resolver.report.figures import write_figures
        written, plot_notes = write_figures(folders, target,
                                            base.path if base is not None else None, given)
        report.written += written
        report.notes += plot_notes
    # a partial build (one table, one format) leaves the others as an earlier build wrote them:
    # preview.tex would \input an old mab-fc.tex beside a new mab-fc.md, so they are named
    left = [name for name in OUTPUT_FILES
            if (target / name).exists() and target / name not in report.written]
    if left:
        report.notes.append(f"left from an earlier build in {target}, not rewritten now: "
                            f"{', '.join(left)} (they may show other folders than this build)")
    return report
