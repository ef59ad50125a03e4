"""`fitted`: a paper table laid out to fit its place on the preview's two-column page.

The preview (paper_tables.PREVIEW_PREAMBLE) is ACL's page: 11 pt type, 6.3 in of text in two
columns of 3.03 in, 9.25 in high. A float wider than its place runs into the margin, and one
taller than the page runs past its bottom, its last rows lost ("Float too large", verification
U35, U36). Both are estimated from the characters (Computer Modern's widths), without running
TeX; tests/test_page_fit.py measures the tables with TeX and checks the estimates hold:

- too wide: its text columns (names, run ids, plan sets, sources) wrap at one width that lets
  the figures fit beside them, at the table's size, then smaller; a `table` that one column
  cannot hold spans the page; as the last resort, the narrowest layout scaled to the page;
- too tall: a `longtable`, which breaks across pages with its header repeated (LaTeX sets a
  long table only on one-column pages: it switches there and back, tables._longtable).

A table that fits is left as it is (docs/tables.md, "Tables that fit the page")."""
from __future__ import annotations

import math
import re
from dataclasses import replace

from resolver.run.tables import LONG, Cell, Table

PT_PER_CM = 72.27 / 2.54
PAGE_WIDTH = 6.3 * 72.27                    # \textwidth: a table* spans it
COLUMN_WIDTH = (6.3 - 0.24) / 2 * 72.27     # one column: a table
PAGE_HEIGHT = 9.25 * 72.27                  # \textheight
# (type size in pt, baseline skip in pt) of the sizes a table uses, in an 11 pt document
SIZES = {r"\small": (10.0, 12.0), r"\scriptsize": (8.0, 9.5), r"\footnotesize": (9.0, 11.0),
         r"\normalsize": (10.95, 13.6)}
SMALLER = {r"\small": r"\scriptsize", r"\footnotesize": r"\scriptsize"}
TABCOLSEP = 3.0                             # latex_table's \tabcolsep
# the share of its place a table's estimated width may fill: the widths are TeX's own at
# \scriptsize (tests/test_page_fit.py measures them), wider at larger sizes and for other
# characters
WIDTH_MARGIN = 0.99
# the share of the page its estimated height may fill: the estimate is on the tall side by
# itself (3-15% above the height TeX gives every table tests/test_page_fit.py measures)
HEIGHT_MARGIN = 1.0
FILLED = 0.85               # the share of a wrapping column's lines its words fill (ragged)
NARROWEST = 1.4 * PT_PER_CM                 # a wrapped text column is never narrower
WRAP = r">{{\raggedright\arraybackslash}}p{{{}}}"
# Character widths in em of the T1 Computer Modern roman at 8 pt (ecrm0800, the preview's
# \scriptsize), printable ASCII from "!" to "~"; a space is .354, any other character .9; at a
# larger size a character is narrower per em (ecrm0900, ecrm1000, ecrm1095: x .967, .94, .936,
# rounded up here)
_ASCII = "".join(map(chr, range(33, 127)))
_EM = dict(zip(_ASCII, map(float, (
    ".295 .531 .885 .531 .885 .826 .295 .413 .413 .531 .826 .295 .354 .295 .531 .531 .531 .531 "
    ".531 .531 .531 .531 .531 .531 .531 .295 .295 .826 .826 .826 .502 .826 .796 .752 .767 .811 "
    ".722 .693 .833 .796 .383 .545 .825 .663 .973 .796 .826 .722 .826 .781 .590 .767 .796 .796 "
    "1.091 .796 .796 .649 .295 .531 .295 .649 .826 .295 .531 .590 .472 .590 .472 .325 .531 .590 "
    ".295 .325 .561 .295 .885 .590 .531 .590 .561 .414 .419 .413 .590 .561 .767 .561 .561 .472 "
    ".531 .295 .531 .649").split())))
_EM[" "] = 0.354
OTHER_EM = 0.9
_PER_SIZE = {9.0: 0.97, 10.0: 0.945, 10.95: 0.94}
_BREAKS = re.compile(r"(?<=[-_/ ])")        # where a wrapped name may break
_P_COLUMN = re.compile(r"p\{([\d.]+)cm\}")


def text_width(text: str, size: float) -> float:
    """The width in pt of `text` set at `size` pt in Computer Modern, on the wide side."""
    return sum(_EM.get(ch, OTHER_EM) for ch in text) * size * _PER_SIZE.get(size, 1.0)


def _cell_width(cell: Cell, size: float) -> float:
    text = text_width(cell.text + cell.mark, size)
    detail = text_width(cell.detail, SIZES[r"\scriptsize"][0]) if cell.detail else 0.0
    return max(text, detail)


def _longest_token(cell: Cell, size: float) -> float:
    return max((text_width(t, size) for t in _BREAKS.split(cell.text + cell.mark) if t),
               default=0.0)


def _columns(table: Table) -> list[tuple[str, float | None]]:
    """(alignment, fixed width in pt or None) per column, from tex_align (p{...} columns) or
    align."""
    if not table.tex_align:
        return [(a, None) for a in table.align]
    spec = re.sub(r"[@>]\{(?:[^{}]|\{[^{}]*\})*\}", "", table.tex_align)
    out = []
    for kind in re.findall(r"p\{[^{}]*\}|[lrc]", spec):
        width = _P_COLUMN.fullmatch(kind)
        out.append(("p", float(width[1]) * PT_PER_CM) if width else (kind, None))
    return out


def _natural(table: Table, size: float) -> list[float]:
    """Each column's natural width: its widest cell or header, unwrapped."""
    widest = [text_width(h, size) for h in table.headers]
    for row in table.rows:
        for i, cell in enumerate(row):
            widest[i] = max(widest[i], _cell_width(cell, size))
    return widest


def _widths(table: Table, size: float) -> list[float]:
    """Each column's width: its natural width, or its fixed width (p{...})."""
    return [fixed if fixed is not None else w
            for (_, fixed), w in zip(_columns(table), _natural(table, size))]


def _total(widths: list[float]) -> float:
    return sum(widths) + 2 * TABCOLSEP * (len(widths) - 1)


def _place(table: Table) -> float:
    return COLUMN_WIDTH if table.float == "table" else PAGE_WIDTH


def _wrapped(table: Table, size_name: str, narrowest: bool = False) -> Table | None:
    """The table with its text columns (left-aligned or already wrapping) wrapping at one
    width that makes it fit its place at `size_name`, or None when no width does (each stays
    wider than its longest word); with `narrowest`, each at its narrowest, fit or not."""
    size = SIZES[size_name][0]
    widths = _widths(table, size)
    columns = _columns(table)
    text = [i for i, (a, fixed) in enumerate(columns) if a in "lp"]
    if not text:
        return None
    floor = {i: max(NARROWEST, max((_longest_token(r[i], size) for r in table.rows),
                                   default=0.0), text_width(table.headers[i], size) * 0.6)
             for i in text}

    def width(i: int, cap: float) -> float:
        """Column i's width under `cap`: its natural one, or where it wraps (TeX's, rounded
        up to a tenth of a cm)."""
        if widths[i] <= max(floor[i], cap):
            return widths[i]
        return _cm_pt(max(floor[i], cap))

    room = _place(table) * WIDTH_MARGIN
    low, high, fits = 0.0, max(widths[i] for i in text), None
    for _ in range(40):         # the widest cap that fits
        cap = (low + high) / 2
        if _total([width(i, cap) if i in floor else w for i, w in enumerate(widths)]) <= room:
            fits, low = cap, cap
        else:
            high = cap
    if narrowest:
        fits = 0.0
    if fits is None:
        return None
    spec = []
    for i, (a, fixed) in enumerate(columns):
        if i in floor and (fixed is not None or widths[i] > max(floor[i], fits)):
            spec.append(WRAP.format(_cm(width(i, fits))))
        else:
            spec.append(a)
    return replace(table, tex_align="".join(spec), tex_size=size_name)


def _cm_pt(pt: float) -> float:
    """A width in pt rounded up to a tenth of a cm (never narrower), in pt."""
    return math.ceil(pt / PT_PER_CM * 10 - 1e-9) / 10 * PT_PER_CM


def _cm(pt: float) -> str:
    """A width in pt as TeX reads it: in cm, to a tenth (`pt` rounded already)."""
    return f"{pt / PT_PER_CM:.1f}cm"


def _fits(table: Table) -> bool:
    return _total(_widths(table, SIZES[table.tex_size][0])) <= _place(table) * WIDTH_MARGIN


def _fit_width(table: Table) -> Table | None:
    """The table as it is when it fits its place, else in smaller type, else with its text
    columns wrapping (at its own size, then smaller); None when none of these fits."""
    if _fits(table):
        return table
    for size_name in (table.tex_size, SMALLER.get(table.tex_size)):
        if size_name is None:
            continue
        if size_name != table.tex_size and _fits(replace(table, tex_size=size_name)):
            return replace(table, tex_size=size_name)
        wrapped = _wrapped(table, size_name)
        if wrapped is not None:
            return wrapped
    return None


def height(table: Table) -> float:
    """The table's height in pt as a float, caption and notes included, roughly (on the tall
    side)."""
    size, skip = SIZES[table.tex_size]
    detail_skip = SIZES[r"\scriptsize"][1]
    columns = _columns(table)
    total = 2 * SIZES[r"\normalsize"][1] + 12           # the caption, the float's skips
    total += skip * (1 + bool(table.header_groups)) + 10      # headers and their rules
    for title, group in zip(table.group_titles or ("",) * len(table.groups), table.groups):
        total += 4 + (skip if title else 0)                   # a rule, a title row
        for row in group:
            tallest = skip
            for cell, (_, fixed) in zip(row, columns):
                lines = math.ceil(text_width(cell.text + cell.mark, size) / (fixed * FILLED)) \
                    if fixed else 1
                tallest = max(tallest, lines * skip + (detail_skip if cell.detail else 0))
            total += tallest
    return total + _notes_height(table)


def _notes_height(table: Table) -> float:
    """The height in pt of the notes below the tabular, roughly (on the tall side)."""
    note_size, note_skip = SIZES[r"\footnotesize"]
    total = 3.0 * bool(table.notes)                           # \smallskip
    for note in table.notes:
        text = note if isinstance(note, str) else "".join(note.parts)
        # a paragraph set ragged right: its lines are filled as a wrapping cell's are
        total += math.ceil(text_width(text, note_size) / (_place(table) * FILLED)) * note_skip
    return total


def fitted(table: Table) -> tuple[Table, str]:
    """`table` laid out to fit its place on the preview's page (see the module docstring), and
    a note when it cannot ("" when it does): a float only; a bare tabular is left as it is."""
    if table.float not in ("table", "table*"):
        return table, ""
    fitting = _fit_width(table)
    if fitting is None and table.float == "table":
        fitting = _fit_width(replace(table, float="table*"))     # one column is too narrow
    if fitting is None:
        # the last resort: its narrowest layout across the page, scaled down to the page
        wide = replace(table, float="table*")
        size_name = SMALLER.get(table.tex_size, table.tex_size)
        narrowest = _wrapped(wide, size_name, narrowest=True) or replace(wide,
                                                                        tex_size=size_name)
        shrink = _place(wide) / _total(_widths(narrowest, SIZES[size_name][0]))
        notes = _notes_height(narrowest)         # not scaled: they wrap at the page's width
        if (height(narrowest) - notes) * shrink + notes <= PAGE_HEIGHT * HEIGHT_MARGIN:
            return replace(narrowest, tex_scale=True), ""
        return replace(narrowest, float=LONG), (
            f"{table.table_id}: wider than the page in every layout and taller than a page: "
            f"its LaTeX runs into the margin (it has {len(table.headers)} columns: show fewer, "
            f"e.g. fewer --columns)")
    if height(fitting) > PAGE_HEIGHT * HEIGHT_MARGIN:
        return replace(fitting, float=LONG), ""
    return fitting, ""
