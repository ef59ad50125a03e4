"""`factres compare`'s result (`compare.Comparison`) rendered: Markdown, LaTeX (through the one
`Table` row model of `resolver.run.tables`) and JSON, and written into a new folder with `--out`.

- Markdown: who A and B are, one table (a group per compared run: its sources, then its pooled
  rows), the footnotes, then the flipped question ids per run and source.
- LaTeX: the same table as a booktabs `tabular` for `\\input{}`, footnotes as its last rows;
  who A and B are and the flipped ids follow as `%` comments (the ids are for looking up, not
  for a paper's page).
- JSON (`factres.compare/1`): everything, sorted keys; EMs, differences and intervals rounded
  to 6 decimals as metrics.json keeps them, p values as computed.

`--out DIR` writes compare.md, compare.tex and compare.json into DIR, which must be new: it is
claimed and written like a run folder (a `.tmp-` folder with the `.incomplete` marker, renamed
into place when every file is written), so nothing is ever overwritten and an interrupted write
never passes for a report. User text (run names, labels, question ids) is escaped once, here,
per format (`resolver.escape`)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import resolver.escape as escape
from resolver.report.compare import Comparison, Pair, Row
from resolver.results.result_schema import dumps
from resolver.run.run_folder import write_new_folder
from resolver.run.tables import Cell, Note, Table, latex_table, markdown_table, pct

SCHEMA = "factres.compare/1"
FORMATS = ("md", "latex", "json")
FILES = {"md": "compare.md", "latex": "compare.tex", "json": "compare.json"}
HEADERS = ("B", "source", "n", "EM A", "EM B", "B - A", "95% CI", "A only", "B only", "p")
ALIGN = "llrrrrrrrr"
CELL_TEST = "exact McNemar test, two-sided (binomial test of B only among the discordant " \
            "questions; p = 1 when none is discordant)"
POOLED_TEST = "exact McNemar test stratified by size, which is the exact test on the " \
              "discordant questions summed over the sizes (each discordant question weighs " \
              "the same)"


# ---- numbers --------------------------------------------------------------------------------
def points(x: float) -> str:
    """A difference of shares in percentage points, signed, one decimal ("+5.0", "-2.5")."""
    return f"{round(100 * x, 1) + 0.0:+.1f}"    # + 0.0: no "-0.0"


P_FLOOR = 1e-4
P_BELOW, P_BELOW_TEX = "< 10^-4", r"$<10^{-4}$"


def p_text(p: float) -> str:
    """A p value, written one way: four decimals, or "< 10^-4" below 0.0001 (the JSON keeps
    the value as computed)."""
    return f"{p:.4f}" if p >= P_FLOOR else P_BELOW


def p_cell(p: float) -> Cell:
    """A p value as a table cell: in LaTeX, below 10^-4 in math ($<10^{-4}$)."""
    return Cell(p_text(p), own=True, tex=P_BELOW_TEX if p < P_FLOOR else "")


def _label(row: Row) -> str:
    return f"{row.label} ({'+'.join(row.sizes)})" if row.pooled else row.label


ABSTAINS = "¶"       # a run made with --abstain-below, as mab-fc marks it


def _cells(pair: Pair, row: Row) -> tuple[Cell, ...]:
    mark = ABSTAINS if pair.b.abstain_below else ""
    # the names are user text; the figures (an interval in brackets) factres's own
    figures = (str(row.n), pct(row.em_a), pct(row.em_b), points(row.difference),
               f"[{points(row.ci[0])}, {points(row.ci[1])}]", str(row.a_only), str(row.b_only))
    return (Cell(pair.b.name, mark=mark), Cell(_label(row))) \
        + tuple(Cell(f, own=True) for f in figures) + (p_cell(row.p),)


# ---- what the table says in words -------------------------------------------------------------
def dropped_note(comparison: Comparison) -> str | Note | None:
    """What --intersect left out, per source, and which run lacked it; None without it."""
    if not comparison.intersect:
        return None
    kept = sum(n for _, n in comparison.shared)
    if not comparison.dropped:
        return f"--intersect: every run has the same {kept} questions; none was dropped."
    total = sum(d.dropped for d in comparison.dropped)
    parts = [f"--intersect: compared on the {kept} questions every run has; {total} dropped, "
             "per source: "]
    for i, d in enumerate(comparison.dropped):
        parts += [d.source, f": {d.dropped} ("]
        for j, (name, n) in enumerate(d.lacking):
            parts += [name, f" lacks {n}" + (", " if j < len(d.lacking) - 1 else "")]
        parts[-1] += ")" + ("; " if i < len(comparison.dropped) - 1 else ".")
    return Note(tuple(parts))


def notes(comparison: Comparison) -> list[str | Note]:
    """The footnotes; the names they quote are escaped by the table's renderer."""
    a = comparison.runs[0]
    out: list[str | Note] = [
        Note(("A: ", a.name, " (", a.label, "), the baseline; B: the run in the first column. "
              "EM: substring exact match (%) over the questions both runs have; B - A: the "
              f"difference in points, with its paired bootstrap {comparison.level:.0%} interval "
              f"({comparison.resamples:,} resamples of the questions, the same resample for both "
              f"runs, seed {comparison.seed}, one random stream per source).")),
        "A only, B only: questions only A, only B answers right (the discordant pairs); "
        f"p: {CELL_TEST}; per row, not adjusted for the number of rows or runs compared."]
    if any(row.pooled for pair in comparison.pairs for row in pair.rows):
        out.append("pooled rows: the mean over sizes (each size weighs the same, the "
                   "benchmark's convention; pooled all: the mean over every single-hop and "
                   "multi-hop source); the interval resamples within each size; p: the "
                   f"{POOLED_TEST}.")
    dropped = dropped_note(comparison)
    if dropped:
        out.append(dropped)
    for run in comparison.runs:
        if run.abstain_below:
            # an empty answer of such a run is its choice, scored wrong: the EM is not the
            # resolver's alone
            out.append(Note((f"{ABSTAINS} ", run.name, f": made with --abstain-below "
                             f"{run.abstain_below}: {run.abstained} of its {run.questions} "
                             "questions were left unanswered (their label was below it) and "
                             "count as wrong.")))
        if run.missing:
            out.append(Note(("", run.name, f": {run.missing} of its {run.questions} "
                             "questions have no prediction in the imported files and count as "
                             "wrong, as in its scores.")))
    return out


def plain(note: str | Note) -> str:
    """A footnote as plain text (JSON)."""
    return note if isinstance(note, str) else "".join(note.parts)


def table(comparison: Comparison) -> Table:
    groups = []
    for pair in comparison.pairs:
        groups.append(tuple(_cells(pair, r) for r in pair.rows if not r.pooled))
        groups.append(tuple(_cells(pair, r) for r in pair.rows if r.pooled))
    return Table("compare", "", HEADERS, ALIGN, tuple(g for g in groups if g),
                 notes=tuple(notes(comparison)), comment=False)


def flips(comparison: Comparison, esc: Callable[[str], str]) -> list[str]:
    """One line per compared run and source with a flip: "B, source: B only (n): ids; A only
    (n): ids"; one line saying so when nothing flipped."""
    lines = []
    for pair in comparison.pairs:
        for row in pair.rows:
            if row.pooled or not (row.a_only or row.b_only):
                continue
            said = [f"{who} only ({len(ids)}): " + (", ".join(esc(q) for q in ids) or "none")
                    for who, ids in (("B", row.b_only_ids), ("A", row.a_only_ids))]
            lines.append(f"{esc(pair.b.name)}, {esc(row.label)}: {'; '.join(said)}")
    return lines or ["no question flipped"]


def _runs(comparison: Comparison, esc: Callable[[str], str]) -> list[str]:
    out = []
    for i, run in enumerate(comparison.runs):
        role = "A (baseline)" if i == 0 else "B"
        out.append(f"{role}: {esc(run.name)}: {esc(run.label)}, {run.questions} questions")
    return out


# ---- the three formats --------------------------------------------------------------------------
def markdown(comparison: Comparison) -> str:
    text = "".join(f"- {line}\n" for line in _runs(comparison, escape.markdown))
    text += "\n" + markdown_table(table(comparison))
    text += ("\nFlipped questions (A only: A right and B wrong; B only: B right and A wrong):"
             "\n\n")
    # a list item per run and source, wrapped (an id list runs long): its lines go on indented
    text += "".join(_wrapped(f"- {line}", "  ") for line in flips(comparison, escape.markdown))
    return text


WIDTH = 100


def _wrapped(text: str, indent: str, first: str = "") -> str:
    """`text` wrapped at WIDTH columns, between words only (ids are never cut), each line
    after the first indented; `first` opens every line (a `%` comment's mark)."""
    import textwrap
    lines = textwrap.wrap(text, WIDTH - len(first), subsequent_indent=indent,
                          break_long_words=False, break_on_hyphens=False) or [""]
    return "".join(f"{first}{line}\n" for line in lines)


def latex(comparison: Comparison) -> str:
    def comment(lines: list[str]) -> str:
        return "".join(_wrapped(escape.latex_comment(line), "  ", "% ") for line in lines)
    head = comment(["factres compare: EM of each run B against the baseline A, question by "
                    "question", *_runs(comparison, str), r"needs \usepackage{booktabs}"])
    tail = comment(["flipped questions (A only: A right and B wrong; B only: B right and A "
                    "wrong):", *flips(comparison, str)])
    return head + latex_table(table(comparison)) + tail


def _rounded(x: float) -> float:
    return round(x, 6)


def _row_json(row: Row) -> dict:
    return {"label": row.label, "kind": row.kind, "sizes": list(row.sizes),
            "pooled": row.pooled, "n": row.n, "em_a": _rounded(row.em_a),
            "em_b": _rounded(row.em_b), "difference": _rounded(row.difference),
            "ci": [_rounded(row.ci[0]), _rounded(row.ci[1])], "a_only": row.a_only,
            "b_only": row.b_only, "p": row.p, "a_only_ids": list(row.a_only_ids),
            "b_only_ids": list(row.b_only_ids)}


def to_json(comparison: Comparison) -> dict:
    def run(side) -> dict:
        return {"name": side.name, "run_id": side.run_id, "kind": side.kind,
                "label": side.label, "questions": side.questions, "missing": side.missing,
                "abstain_below": side.abstain_below, "abstained": side.abstained}
    return {"schema": SCHEMA, "baseline": comparison.runs[0].name,
            "runs": [run(r) for r in comparison.runs],
            "pairs": [{"a": p.a.name, "b": p.b.name, "rows": [_row_json(r) for r in p.rows]}
                      for p in comparison.pairs],
            "intersect": comparison.intersect,
            "shared": dict(comparison.shared),
            "dropped": [{"source": d.source, "dropped": d.dropped,
                         "lacking": dict(d.lacking)} for d in comparison.dropped],
            "bootstrap": {"resamples": comparison.resamples, "seed": comparison.seed,
                          "level": comparison.level, "method": "paired percentile bootstrap "
                          "over questions (scipy.stats.bootstrap); pooled: within each size, "
                          "mean over sizes"},
            "tests": {"cell": CELL_TEST, "pooled": POOLED_TEST},
            "notes": [plain(n) for n in notes(comparison)]}


def json_text(comparison: Comparison) -> str:
    return dumps(to_json(comparison)).decode("utf-8")


RENDERERS = {"md": markdown, "latex": latex, "json": json_text}


def render(comparison: Comparison, fmt: str) -> str:
    return RENDERERS[fmt](comparison)


def write_report(comparison: Comparison, out: str | Path) -> list[Path]:
    """compare.md, compare.tex and compare.json in the new folder `out` (claimed first, written
    whole, then renamed into place); a folder that exists is refused."""
    return write_new_folder(Path(out), {FILES[f]: render(comparison, f) for f in FORMATS},
                            "factres compare")
