"""Tables: one row model (`Table` of `Cell`s), two renderings (Markdown, LaTeX booktabs).

Every table factres prints or writes goes through `markdown_table` and `latex_table`, so the two
renderings of a table cannot disagree: a run's score table (`metrics_table`, from
result_schema.MetricsRow) and the paper tables of `paper_tables` alike.

LaTeX output is a bare `tabular` (no float, no caption), ready for `\\input{}` inside the
reader's own `table` environment; it needs `\\usepackage{booktabs}`. Footnotes are final
`\\multicolumn` rows below `\\bottomrule` (so they travel with the tabular), set in zero-width
boxes so a long note never widens a column; the caption and the folders a table was built from
are `%` comments at its top (HTML comments in Markdown).
Percentages have one decimal; an unscored run shows "unscored", a missing figure an em dash."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import resolver.escape as escape
from resolver.results.result_schema import IMPORTED_KIND, MetricsRow, run_kind, run_mode

DASH = "—"


@dataclass(frozen=True)
class Cell:
    """One table cell: a figure or label, an optional detail (an interval) that Markdown puts
    after it and LaTeX below it in small type, and an optional footnote mark."""
    text: str
    detail: str = ""
    mark: str = ""
    own: bool = False       # text factres composed (a figure and its interval): Markdown shows
    #                         its brackets as written; user text (a name) is escaped
    tex: str = ""           # the same text as LaTeX factres composed (math: "$<10^{-4}$"),
    #                         used instead of the escaped text


@dataclass(frozen=True)
class Note:
    """A footnote that quotes user text (a run's name): `parts` alternate factres's own words
    and user text, starting with factres's; each renderer escapes the user text for its format
    (a plain `str` note is all factres's own)."""
    parts: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table as data. `groups` are runs of rows: LaTeX draws a \\midrule between them.
    `header_groups` optionally span headers over columns ((label, columns), summing to the
    column count): LaTeX draws them as a first header row with \\cmidrule; Markdown, which
    has one header row, prefixes each column's header with its group's label."""
    table_id: str
    caption: str
    headers: tuple[str, ...]
    align: str                                        # "l", "r" or "c" per column
    groups: tuple[tuple[tuple[Cell, ...], ...], ...]
    header_groups: tuple[tuple[str, int], ...] = ()
    notes: tuple[str | Note, ...] = ()                # footnotes, in order
    sources: tuple[str, ...] = ()                     # what the table was built from
    comment: bool = field(default=True)               # write the caption/sources comment
    group_titles: tuple[str, ...] = ()                # a heading row over a group ("" none):
    #                                                   factres's own words, one per group
    tex_align: str = ""                               # LaTeX's column spec, when not `align`
    #                                                   (columns that wrap: needs array)
    tex_size: str = r"\small"                         # a float's type size
    float: str = ""                                   # LaTeX: "" a bare tabular, notes as its
    #                                                   last rows; "table" (one column of a
    #                                                   two-column page) or "table*" (both): the
    #                                                   float with caption, label and the notes
    #                                                   as a paragraph that wraps at its width;
    #                                                   "longtable": the same, breaking across
    #                                                   pages (taller than a page)
    tex_scale: bool = False                           # a float's tabular scaled to its width
    #                                                   (\resizebox: needs graphicx), for one
    #                                                   too wide in every layout

    def __post_init__(self) -> None:
        width = len(self.headers)
        if len(self.align) != width:
            raise ValueError(f"table {self.table_id}: {len(self.align)} alignments for "
                             f"{width} columns")
        if self.header_groups and sum(n for _, n in self.header_groups) != width:
            raise ValueError(f"table {self.table_id}: header groups span "
                             f"{sum(n for _, n in self.header_groups)} of {width} columns")
        if self.group_titles and len(self.group_titles) != len(self.groups):
            raise ValueError(f"table {self.table_id}: {len(self.group_titles)} group titles "
                             f"for {len(self.groups)} groups")
        for group in self.groups:
            for row in group:
                if len(row) != width:
                    raise ValueError(f"table {self.table_id}: a row has {len(row)} cells "
                                     f"for {width} columns")

    @property
    def rows(self) -> list[tuple[Cell, ...]]:
        return [row for group in self.groups for row in group]


# ---- Markdown -------------------------------------------------------------------------------
_MD_ALIGN = {"l": "---", "r": "--:", "c": ":-:"}


def _md_cell(cell: Cell) -> str:
    # the cell's text is data (a name, a figure); its mark and interval are factres's own
    text = (escape.visible(cell.text) if cell.own else escape.markdown(cell.text)) + cell.mark
    return f"{text} {cell.detail}" if cell.detail else text


def _md_headers(table: Table) -> list[str]:
    if not table.header_groups:
        return list(table.headers)
    out, i = [], 0
    for label, span in table.header_groups:
        for header in table.headers[i:i + span]:
            out.append(f"{label} {header}" if label else header)
        i += span
    return out


def _comments(table: Table, esc: Callable[[str], str]) -> list[str]:
    """The comment lines both renderings open with: table id and caption, source folders (their
    names escaped by `esc`: a folder name must not end the comment)."""
    if not (table.comment and (table.caption or table.sources)):
        return []
    out = [f"{table.table_id}: {esc(table.caption)}" if table.caption else table.table_id]
    if table.sources:
        out.append(f"built by factres tables from: {', '.join(esc(s) for s in table.sources)}")
    return out


def _titled(table: Table):
    """(group title or "", the group) for every group."""
    return zip(table.group_titles or ("",) * len(table.groups), table.groups)


def _md_note(note: str | Note) -> str:
    # factres's own sentences (their marks are meant) as they are; quoted user text escaped
    if isinstance(note, str):
        return escape.visible(note)
    return "".join(escape.visible(p) if i % 2 == 0 else escape.markdown(p)
                   for i, p in enumerate(note.parts))


def markdown_table(table: Table) -> str:
    """A GitHub Markdown table; a group's title is a row of its own (its first cell in
    italics); notes follow the table, one paragraph each."""
    lines = [f"<!-- {text} -->" for text in _comments(table, escape.markdown)]
    lines.append("| " + " | ".join(escape.markdown(h) for h in _md_headers(table)) + " |")
    lines.append("|" + "|".join(_MD_ALIGN[a] for a in table.align) + "|")
    for title, group in _titled(table):
        if title and group:
            lines.append(f"| *{escape.markdown(title)}* |" + " |" * (len(table.headers) - 1))
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in group]
    for note in table.notes:
        lines += ["", _md_note(note)]
    return "\n".join(lines) + "\n"


# ---- LaTeX ----------------------------------------------------------------------------------
_TABCOLSEP = "3pt"              # a paper table's column gap (LaTeX's default is 6pt)
LONG = "longtable"              # Table.float of a table taller than a page
_MARKS = {"†": r"\dag", "‡": r"\ddag", "§": r"\S", "¶": r"\P",
          "↑": r"\ensuremath{\uparrow}", "↓": r"\ensuremath{\downarrow}"}


def _tex_cell(cell: Cell, align: str, wraps: bool = False) -> str:
    text = cell.tex or escape.latex(cell.text)
    if wraps:
        # a column that wraps may break a long name after its underscores too
        text = text.replace(r"\_", r"\_\allowbreak{}")
    if cell.mark:
        text += (r"\textsuperscript{" + "".join(_MARKS.get(m, escape.latex(m)) for m in cell.mark)
                 + "}")
    if cell.detail:
        # A nested tabular stacks the interval under the figure: narrower columns at paper
        # width, and no package beyond booktabs.
        text = (r"\begin{tabular}[t]{@{}" + align + r"@{}}" + text + r"\\{\scriptsize "
                + escape.latex(cell.detail) + r"}\end{tabular}")
    return text


def _tex_note(note: str | Note) -> str:
    """A footnote; a leading mark ("* ...", "† ...") is set as a superscript, as in the cells.
    Quoted user text is escaped as any text is: LaTeX escapes factres's own words too."""
    if isinstance(note, Note):
        return _tex_note(note.parts[0]) + "".join(escape.latex(p) for p in note.parts[1:])
    mark, _, rest = note.partition(" ")
    if mark and rest and all(m in _MARKS or m == "*" for m in mark):
        return (r"\textsuperscript{" + "".join(_MARKS.get(m, m) for m in mark) + "} "
                + escape.latex(rest))
    return escape.latex(note)


def latex_table(table: Table) -> str:
    """A booktabs `tabular` for `\\input{}`: \\midrule between row groups, notes as final
    \\multicolumn rows in \\footnotesize; or, for a table with a `float`, that float, ready to
    `\\input{}` where the table goes: caption and label (`tab:<id>`), the tabular, and the notes
    as a footnote-size paragraph below it, which wraps at the float's width (a `longtable`,
    `_longtable`, for one taller than a page)."""
    width = len(table.headers)
    # which columns wrap (p{...} in tex_align): their cells may break after an underscore
    wraps = [kind == "p" for kind in re.findall(
        r"p(?=\{)|[lrc](?![^{]*\})", re.sub(r"[@>]\{(?:[^{}]|\{[^{}]*\})*\}", "",
                                             table.tex_align))] or [False] * width
    out = [f"% {text}" for text in _comments(table, escape.latex_comment)]
    if out:
        needs = ["booktabs"] + ["array"] * bool(table.tex_align) \
            + ["longtable"] * (table.float == LONG) + ["graphicx"] * table.tex_scale
        out.append(r"% needs " + " and ".join(r"\usepackage{" + n + "}" for n in needs))
    if table.float == LONG:
        return "\n".join(out + _longtable(table, wraps)) + "\n"
    if table.float:
        out += [r"\begin{" + table.float + "}[tbp]", r"\centering" + table.tex_size,
                r"\setlength{\tabcolsep}{" + _TABCOLSEP + "}",
                r"\caption{" + escape.latex(table.caption) + "}",
                r"\label{tab:" + table.table_id + "}"]
    # a float's tabular has no padding outside its first and last columns: it is as wide as
    # its columns, flush with the text
    align = table.tex_align or table.align
    align = f"@{{}}{align}@{{}}" if table.float else align
    if table.tex_scale:
        out.append(r"\resizebox{\linewidth}{!}{%")
    out += [r"\begin{tabular}{" + align + "}", r"\toprule"]
    out += _tex_headers(table)
    out += _tex_rows(table, wraps)
    out.append(r"\bottomrule")
    if table.float:
        out.append(r"\end{tabular}" + "}" * table.tex_scale)
        out += _tex_notes(table)
        out.append(r"\end{" + table.float + "}")
        return "\n".join(out) + "\n"
    for note in table.notes:
        # A zero-width box: a note longer than the table must not stretch its last column.
        out.append(r"\multicolumn{" + str(width) + r"}{@{}l}{\makebox[0pt][l]{\footnotesize "
                   + _tex_note(note) + r"}} \\")
    out.append(r"\end{tabular}")
    return "\n".join(out) + "\n"


def _tex_headers(table: Table) -> list[str]:
    """The header rows (the spanning group labels with their rules, then the headers) and the
    rule below them."""
    out = []
    if table.header_groups:
        cells, rules, start = [], [], 1
        for label, span in table.header_groups:
            if not label:
                cells += [""] * span
            else:
                cells.append(r"\multicolumn{" + str(span) + "}{c}{" + escape.latex(label) + "}")
                rules.append(r"\cmidrule(lr){" + f"{start}-{start + span - 1}" + "}")
            start += span
        out.append(" & ".join(cells) + r" \\")
        out.append(" ".join(rules))
    out.append(" & ".join(escape.latex(h) for h in table.headers) + r" \\")
    out.append(r"\midrule")
    return out


def _tex_rows(table: Table, wraps: list[bool]) -> list[str]:
    r"""The groups' rows, a \midrule between groups, a group's title as a row over it."""
    out, started, width = [], False, len(table.headers)
    for title, group in _titled(table):
        if started and group:
            out.append(r"\midrule")
        started = started or bool(group)
        if title and group:
            out.append(r"\multicolumn{" + str(width) + r"}{@{}l}{\textit{" + escape.latex(title)
                       + r"}} \\")
        for row in group:
            line = " & ".join(_tex_cell(c, a, w) for c, a, w in zip(row, table.align, wraps))
            # `\\` and the rules before a row look past spaces and the line break for an
            # optional [<length>]: a row opening with "[" (a name) must not be read as one
            out.append(("{}" if line.lstrip().startswith("[") else "") + line + r" \\")
    return out


def _tex_notes(table: Table) -> list[str]:
    if not table.notes:
        return []
    return ([r"\par\smallskip", r"{\footnotesize\raggedright"]
            + [_tex_note(note) + r"\par" for note in table.notes] + ["}"])


def _longtable(table: Table, wraps: list[bool]) -> list[str]:
    """A table taller than a page (report/page_fit.py): a `longtable`, which breaks across
    pages with its header repeated on each. LaTeX sets one only on one-column pages, so in a
    two-column document it switches to one column before it and back after it (each switch
    starts a page)."""
    width = len(table.headers)
    headers = _tex_headers(table)
    continued = (r"\multicolumn{" + str(width) + r"}{@{}l}{\textit{Table~\thetable, "
                 r"continued}} \\")
    return [r"\makeatletter\if@twocolumn\onecolumn\gdef\factresColumns{\twocolumn}"
            r"\else\gdef\factresColumns{}\fi\makeatother",
            "{" + table.tex_size + r"\setlength{\tabcolsep}{" + _TABCOLSEP + "}",
            r"\begin{longtable}{@{}" + (table.tex_align or table.align) + "@{}}",
            r"\caption{" + escape.latex(table.caption) + "}",
            r"\label{tab:" + table.table_id + r"} \\",
            r"\toprule", *headers, r"\endfirsthead",
            continued, r"\toprule", *headers, r"\endhead",
            r"\midrule", r"\multicolumn{" + str(width) + r"}{@{}r}{\textit{continued}} \\",
            r"\endfoot", r"\bottomrule", r"\endlastfoot",
            *_tex_rows(table, wraps),
            r"\end{longtable}", *_tex_notes(table), "}", r"\factresColumns"]


# ---- a run's score table (result_schema.MetricsRow) -----------------------------------------
def pct(x: float | None) -> str:
    """A share as a percentage with one decimal; an em dash for a missing figure."""
    return DASH if x is None else f"{100 * x:.1f}"


def em_text(row: MetricsRow) -> str:
    """A metrics row's EM in percent with its interval, or "unscored"."""
    if row["em"] is None:          # only on the test split: gold was never read
        return "unscored"
    em = pct(row["em"])
    if row["ci"] is not None:
        em += f" [{pct(row['ci'][0])}, {pct(row['ci'][1])}]"
    return em


def _stale_text(row: MetricsRow) -> str:
    if row["stale_rate"] is not None and row["pooled"] and len(row["sizes"]) > 1:
        # the rate is the mean over sizes, as EM is; the count pools the questions, so it is
        # said to be a different thing rather than left to read as the rate's fraction
        return (f"{pct(row['stale_rate'])} (mean over sizes; "
                f"{row['stale']}/{row['stale_eligible']} pooled)")
    if row["stale_rate"] is not None:
        return f"{pct(row['stale_rate'])} ({row['stale']}/{row['stale_eligible']})"
    return DASH


def _source_text(row: MetricsRow) -> str:
    label = row["label"]
    return label + (f" ({'+'.join(row['sizes'])})" if row["pooled"] else "")


@dataclass(frozen=True)
class Column:
    """A column of the score table: its header, alignment, its cell's text from a metrics row
    and the run's mode, and whether that text is factres's own (a figure: Markdown keeps its
    brackets) rather than a name."""
    header: str
    align: str
    text: Callable[[MetricsRow, str], str]
    own: bool = False


# The score table's columns, in order: the one place they are chosen (the EM column carries the
# --abstain-below mark). `answered`: the share of the row's questions given a non-empty answer.
COLUMNS = (
    Column("source/size", "l", lambda r, mode: _source_text(r)),
    Column("kind", "l", lambda r, mode: r["kind"]),
    Column("mode", "l", lambda r, mode: mode),
    Column("reader", "l", lambda r, mode: r["reader"]),
    Column("n", "r", lambda r, mode: str(r["n"]), own=True),
    Column("EM (95% CI)", "r", lambda r, mode: em_text(r), own=True),
    Column("answered", "r", lambda r, mode: pct(r["answered"]), own=True),
    Column("stale rate", "r", lambda r, mode: _stale_text(r), own=True),
)
HEADERS = tuple(c.header for c in COLUMNS)
EM_COLUMN = "EM (95% CI)"


def cells(row: MetricsRow, mode: str = "search") -> tuple[str, ...]:
    """The score table's cells of a metrics row, as text."""
    return tuple(c.text(row, mode) for c in COLUMNS)


ABSTAINS = "¶"                 # a run made with --abstain-below, as every table marks it


def abstention(meta: dict) -> tuple[str, int, int] | None:
    """(level, questions abstained from, questions) of a resolver run made with
    --abstain-below (meta.json); None otherwise."""
    level = (meta.get("config") or {}).get("abstain_below") \
        if run_kind(meta) != IMPORTED_KIND else None
    if not level:
        return None
    counts = meta.get("counts") or {}
    return level, counts.get("abstained", 0), counts.get("questions", 0)


def abstention_note(abstained: tuple[str, int, int]) -> str:
    level, n, total = abstained
    return (f"{ABSTAINS} made with --abstain-below {level}: {n} of its {total} questions were "
            "left unanswered (their label was below it) and count as wrong.")


def metrics_table(rows: list[MetricsRow], abstained: tuple[str, int, int] | None = None,
                  mode: str = "search", reads: "ReadSizes | None" = None) -> Table:
    """A run's score table (`COLUMNS`): the per-source rows, then (after a rule) the pooled
    rows; `mode` is the run's ("search", "plain" or "imported": result_schema.run_mode). A run
    made with --abstain-below (`abstention`) has its EM cells marked, with a footnote. `reads`
    (`read_sizes`) adds the mean read size as a last column, with a footnote."""
    mark = ABSTAINS if abstained else ""

    def row(r: MetricsRow) -> tuple[Cell, ...]:
        # names as user text; the figures (an interval in brackets) as factres's own
        extra = (Cell(reads.cells.get(r["label"], DASH), own=True),) if reads else ()
        return tuple(Cell(c.text(r, mode), own=c.own,
                          mark=mark if c.header == EM_COLUMN and r["em"] is not None else "")
                     for c in COLUMNS) + extra
    per_source = tuple(row(r) for r in rows if not r["pooled"])
    pooled = tuple(row(r) for r in rows if r["pooled"])
    notes = (abstention_note(abstained),) if abstained else ()
    headers, align = HEADERS, "".join(c.align for c in COLUMNS)
    if reads:
        headers, align, notes = headers + (READ_HEADER,), align + "r", notes + (reads.note,)
    return Table("run", "", headers, align, (per_source, pooled), notes=notes, comment=False)


def markdown(rows: list[MetricsRow], abstained: tuple[str, int, int] | None = None,
             mode: str = "search", reads: "ReadSizes | None" = None) -> str:
    """A run's score table in GitHub Markdown (`abstained`, `mode`, `reads`: see
    `metrics_table`)."""
    return markdown_table(metrics_table(rows, abstained, mode, reads))


def latex(rows: list[MetricsRow], abstained: tuple[str, int, int] | None = None,
          mode: str = "search", reads: "ReadSizes | None" = None) -> str:
    """A run's score table as a booktabs tabular; a \\midrule before the pooled rows."""
    return latex_table(metrics_table(rows, abstained, mode, reads))


def score_table(meta: dict, rows: list[MetricsRow], fmt: str = "md",
                reads: "ReadSizes | None" = None) -> str:
    """A run folder's score table from its meta.json and metrics rows, as `factres run`,
    `factres score` and `factres table` print it and the folder's table.md/.tex hold it
    (`reads`: the read-size column `factres table --read-size` adds)."""
    render = markdown if fmt == "md" else latex
    return render(rows, abstention(meta), run_mode(meta), reads)


# ---- the mean read size (readout.jsonl) -----------------------------------------------------
READ_HEADER = "read (chars)"


@dataclass(frozen=True)
class ReadSizes:
    """The read-size column: a metrics row's label -> its cell, and the footnote saying what
    the figures are."""
    cells: dict[str, str]
    note: str


def _read_name(read: dict) -> str:
    modes = read["disclose"]
    return f"within {read['budget']:,}" + (f" with {' and '.join(modes)}" if modes else
                                           " with no disclosure")


def read_sizes(rows: list[MetricsRow], predictions: list[dict],
               readout: dict[str, dict]) -> ReadSizes:
    """Per metrics row, the mean characters of its questions' readouts in each configuration
    readout.jsonl records ("143 / 380"): a source's questions, or a pooled row's (every size
    of its kind; "all": sh and mh), the mean over the questions, not over sizes."""
    kind_of = {r["source"]: r["kind"] for r in rows if not r["pooled"]}
    first = next(iter(readout.values()), None)
    reads = first["reads"] if first else []
    out = {}
    for row in rows:
        if row["pooled"]:
            kinds = ("sh", "mh") if row["kind"] == "all" else (row["kind"],)
            sources = {s for s, k in kind_of.items() if k in kinds}
        else:
            sources = {row["source"]}
        sizes = [readout[p["qid"]]["reads"] for p in predictions
                 if p["source"] in sources and p["qid"] in readout]
        if sizes and reads:
            out[row["label"]] = " / ".join(
                f"{sum(s[i]['chars'] for s in sizes) / len(sizes):.0f}"
                for i in range(len(reads)))
    names = " / ".join(_read_name(r) for r in reads)
    note = (f"{READ_HEADER}: the mean length in characters of a question's readout for an LLM "
            f"reader (readout.jsonl), over the row's questions: {names}.")
    return ReadSizes(out, note)


RENDERERS = {"md": markdown, "latex": latex}
