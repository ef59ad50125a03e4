"""The page-fit rule (resolver/report/page_fit.py): a paper table that fits its place is left
as it is; one too wide wraps its text columns (in smaller type when it must); one taller than
the page is a longtable. Its estimates are checked against TeX where pdflatex exists: every
table's estimated height is at least the height TeX gives it, and the tables as fitted compile
in the preview with no overfull box and no float too large (verification U35, U36)."""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from resolver.report import page_fit
from resolver.report import paper_tables as pt
from resolver.report.compare import outcomes
from resolver.report.folders import gather
from resolver.results.reader import read_run
from resolver.run.tables import LONG, Cell, Table, latex_table

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "results"
FIXTURES = ROOT / "tests" / "data" / "tables"
FIXTURE_RUNS = tuple(str(FIXTURES / r) for r in (
    "dev-plain-dirty", "dev-small", "test-262k-unfrozen", "oracle-nbest-dev-small",
    "oracle-ceiling-small", "oracle-ceiling-sizes"))
REFERENCES = FIXTURES / "references.json"
SIGNS = ("Overfull \\hbox", "Float too large")


def _table(rows: int, name: str = "factres search", columns: int = 2,
           float_: str = "table") -> Table:
    headers = ("system",) + tuple(f"c{i}" for i in range(columns))
    body = tuple((Cell(f"{name} {i}"),) + tuple(Cell("98.5", detail="[97.0, 99.0]")
                                               for _ in range(columns)) for i in range(rows))
    return Table("t", "A table", headers, "l" + "r" * columns, (body,),
                 notes=("EM: substring exact match.",), float=float_)


LONG_NAME = "a-system-name-that-is-long " * 3


def test_a_table_that_fits_is_left_as_it_is():
    table = _table(5)
    assert page_fit.fitted(table) == (table, "")
    bare = replace(_table(200), float="")           # a bare tabular: never laid out
    assert page_fit.fitted(bare) == (bare, "")


def test_a_table_taller_than_the_page_breaks_across_pages():
    fitted, note = page_fit.fitted(_table(120))
    assert fitted.float == LONG and note == ""
    assert page_fit.height(fitted) > page_fit.PAGE_HEIGHT
    tex = latex_table(fitted)
    assert "\\begin{longtable}" in tex and "\\endhead" in tex and "\\endfirsthead" in tex
    assert "% needs \\usepackage{booktabs} and \\usepackage{longtable}" in tex
    assert tex.count("98.5") == 2 * 120            # the first row of each page's head: none


def test_a_table_too_wide_wraps_spans_the_page_or_is_scaled():
    # a long name wraps in one column beside three figures
    fitted, _ = page_fit.fitted(_table(3, LONG_NAME, columns=3))
    assert (fitted.float, fitted.tex_scale) == ("table", False) and "p{" in fitted.tex_align
    # beside seven, one column is too narrow: it spans the page
    fitted, _ = page_fit.fitted(_table(3, LONG_NAME, columns=7))
    assert (fitted.float, fitted.tex_scale) == ("table*", False)
    # nine fit nowhere at any size: the last resort, scaled to the page's width
    fitted, note = page_fit.fitted(_table(3, LONG_NAME, columns=9))
    assert (fitted.float, fitted.tex_scale, note) == ("table*", True, "")
    assert "\\resizebox{\\linewidth}{!}{%" in latex_table(fitted)
    assert "\\usepackage{graphicx}" in latex_table(fitted)
    # too wide and too tall: a longtable, and a note that says so
    fitted, note = page_fit.fitted(_table(60, LONG_NAME, columns=9))
    assert fitted.float == LONG and note.startswith("t: wider than the page in every layout "
                                                    "and taller than a page")


def _compile(folder: Path, name: str = "preview") -> str:
    done = subprocess.run(["pdflatex", "-draftmode", "-interaction=nonstopmode",
                           "-halt-on-error", f"{name}.tex"], cwd=folder, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-2000:]
    return (folder / f"{name}.log").read_text(errors="replace")


def test_made_up_tables_compile_fitted(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    tables = [replace(page_fit.fitted(t)[0], table_id=f"t{i}") for i, t in enumerate(
        (_table(5), _table(120), _table(3, LONG_NAME, columns=3),
         _table(3, LONG_NAME, columns=7), _table(3, LONG_NAME, columns=9),
         _table(60, LONG_NAME, columns=7)))]
    pt.write(tables, tmp_path, ("latex",))
    log = _compile(tmp_path)
    for sign in SIGNS:
        assert sign not in log, log[log.index(sign):][:600]


CASES = {
    "fixtures": (FIXTURE_RUNS, {"references": REFERENCES}),
    "marked": (FIXTURE_RUNS, {"references": REFERENCES, "with_references": True}),
    "columns": (tuple(str(COMMITTED / r) for r in (
        "dev-6k-search-confidence", "dev-6k-plain-confidence", "imported-nous-6k")),
        {"columns": pt.fc_columns(("run", "plan-sets", "mode", "reader", "split", "commit"))}),
    "references": ((str(COMMITTED / "dev-6k-search-confidence"),
                    str(COMMITTED / "imported-gemini-2.5-flash-lite-6k")),
                   {"with_references": True}),
}


def test_heights_are_estimated_on_the_tall_side(tmp_path, monkeypatch):
    """Each table as a float (its width fitted), set in a box of its place's width: the
    estimate is at least TeX's height, so a table estimated to fit the page does; and its
    tabular is no wider than the width estimated, give or take the margin."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    monkeypatch.setattr(pt, "fitted", lambda t: (t, ""))
    measured = []
    for case, (runs, options) in CASES.items():
        if case == "marked":
            options = {**options, "baseline": outcomes(read_run(ROOT / "tests" / "data"
                                                                / "baseline" / "dev-weak"))}
        tables, _ = pt.build(gather(runs), **options)
        for table in tables:
            measured.append((f"{case}-{table.table_id}",
                             page_fit._fit_width(table) or table))
    lines = [*pt.PREVIEW_PREAMBLE, r"\begin{document}", r"\makeatletter\def\@captype{table}"]
    for name, table in measured:
        place = r"\textwidth" if table.float == "table*" else r"\columnwidth"
        body = [line for line in latex_table(table).splitlines()
                if not line.startswith(("%", r"\begin{table", r"\end{table"))]
        start = next(i for i, line in enumerate(body) if line.startswith(r"\begin{tabular}"))
        end = body.index(r"\end{tabular}")
        lines += [r"\setbox0\vbox{\hsize=" + place + r"\linewidth=" + place, *body, "}",
                  r"\setbox2\hbox{" + table.tex_size + r"\setlength{\tabcolsep}{3pt}%",
                  *[line + "%" for line in body[start:end + 1]], "}",
                  r"\typeout{HEIGHT " + name + r" \the\ht0 \the\dp0 \the\wd2}"]
    (tmp_path / "measure.tex").write_text("\n".join(lines + [r"\end{document}"]) + "\n")
    log = _compile(tmp_path, "measure")
    real, wide = {}, {}
    for m in re.finditer(r"HEIGHT (\S+) ([\d.]+)pt\s*([\d.]+)pt\s*([\d.]+)pt", log):
        real[m[1]], wide[m[1]] = float(m[2]) + float(m[3]), float(m[4])
    assert len(real) == len(measured) >= 12
    for name, table in measured:
        assert page_fit.height(table) >= real[name], name
        # a width estimated to fit its place does (WIDTH_MARGIN)
        estimate = page_fit._total(page_fit._widths(table,
                                                    page_fit.SIZES[table.tex_size][0]))
        assert wide[name] * page_fit.WIDTH_MARGIN <= estimate, name
    # the rule is tested near the page's height: one fits, one does not
    assert any(page_fit.PAGE_HEIGHT * 0.8 < h < page_fit.PAGE_HEIGHT for h in real.values())
    assert any(h > page_fit.PAGE_HEIGHT for h in real.values())
