"""The paper tables, pinned by golden files rendered from tiny fixture folders
(tests/data/tables/), plus a structural check of the LaTeX and, where pdflatex exists, a compile.

Regenerate the golden files after an intended change with
    FACTRES_UPDATE_GOLDEN=1 python -m pytest tests/test_paper_tables.py
and read the diff before committing it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from resolver.errors import InputError
from resolver.report import paper_tables
from resolver.report.compare import outcomes
from resolver.report.compare_report import plain
from resolver.report.folders import gather
from resolver.report.paper_tables import build, make_tables
from resolver.results.reader import read_run
from resolver.run.tables import Cell, Note, Table, latex_table, markdown_table

DATA = Path(__file__).parent / "data"
FIXTURES = DATA / "tables"
GOLDEN = DATA / "golden"
REFERENCES = FIXTURES / "references.json"
RUNS = ("dev-plain-dirty", "dev-small", "test-262k-unfrozen", "oracle-nbest-dev-small",
        "oracle-ceiling-small", "oracle-ceiling-sizes")


def _rendered() -> dict[str, str]:
    tables, _ = build(gather(tuple(str(FIXTURES / r) for r in RUNS)),
                      references=REFERENCES)
    out = {}
    for t in tables:
        out[f"{t.table_id}.md"] = markdown_table(t)
        out[f"{t.table_id}.tex"] = latex_table(t)
    return out


# mab-fc with --baseline (a scored run over the fixtures' questions, not itself in the table)
# and --with-references: its own golden files
BASELINE = DATA / "baseline" / "dev-weak"
MARKED = "mab-fc-marked"


def _marked() -> dict[str, str]:
    (table,), _ = build(gather(tuple(str(FIXTURES / r) for r in RUNS)), ("mab-fc",),
                        references=REFERENCES, baseline=outcomes(read_run(BASELINE)),
                        with_references=True)
    return {f"{MARKED}.md": markdown_table(table), f"{MARKED}.tex": latex_table(table)}


def _all_rendered() -> dict[str, str]:
    return {**_rendered(), **_marked()}


@pytest.mark.parametrize("name", [f"{t}.{ext}" for t in paper_tables.TABLES + (MARKED,)
                                  for ext in ("md", "tex")])
def test_golden(name):
    got = _all_rendered()[name]
    golden = GOLDEN / name
    if os.environ.get("FACTRES_UPDATE_GOLDEN"):
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8")


def _top_level_cells(line: str) -> int:
    """Cells of a LaTeX row: & outside braces, plus one."""
    line = line.replace("\\\\", "")          # line breaks inside nested tabulars
    depth, n = 0, 1
    for i, ch in enumerate(line):
        if ch == "{" and line[i - 1:i] != "\\":
            depth += 1
        elif ch == "}" and line[i - 1:i] != "\\":
            depth -= 1
        elif ch == "&" and depth == 0 and line[i - 1:i] != "\\":
            n += 1
    return n


def _columns(spec: str) -> int:
    """Columns of a tabular spec: l, r, c and p{...}, past @{...} and >{...}."""
    spec = re.sub(r"[@>]\{(?:[^{}]|\{[^{}]*\})*\}", "", spec)
    return len(re.findall(r"p\{[^{}]*\}|[lrc]", spec))


@pytest.mark.parametrize("table_id", paper_tables.TABLES + (MARKED,))
def test_latex_structure(table_id):
    tex = _all_rendered()[f"{table_id}.tex"]
    body = [line for line in tex.splitlines() if not line.startswith("%")]
    stripped = re.sub(r"\\[{}]", "", "\n".join(body).replace("\\\\", ""))
    assert stripped.count("{") == stripped.count("}")
    # a float to \input{} where the table goes: caption and label, then the tabular
    float_ = re.match(r"\\begin\{(table\*?)\}\[tbp\]\Z", body[0])[1]
    assert body[-1] == "\\end{" + float_ + "}"
    assert body[3].startswith(r"\caption{") and body[4] == r"\label{tab:" + (
        "mab-fc" if table_id == MARKED else table_id) + "}"
    start = next(i for i, line in enumerate(body) if line.startswith(r"\begin{tabular}"))
    spec = re.match(r"\\begin\{tabular\}\{(.+)\}\Z", body[start])[1]
    width = _columns(spec)
    assert spec.startswith("@{}") and spec.endswith("@{}")
    assert body[start + 1] == r"\toprule" and r"\end{tabular}" in body
    assert body.count(r"\bottomrule") == 1 and r"\midrule" in body
    for line in body[start:body.index(r"\end{tabular}")]:
        if not line.endswith(r"\\"):
            continue
        spans = [int(n) for n in re.findall(r"\\multicolumn\{(\d+)\}", line)]
        assert _top_level_cells(line) - len(spans) + sum(spans) == width, line
    # the notes below the tabular, a paragraph each, wrapping at the float's width
    assert "makebox" not in tex


TWO_COLUMN_FIT = """A table that fits its place on a two-column page (ACL's: 6.3 in of text, columns
of 3.03 in, 11 pt), compiled as it is written, without resizing: no overfull box."""


def _compile(folder) -> str:
    done = subprocess.run(["pdflatex", "-draftmode", "-interaction=nonstopmode",
                           "-halt-on-error", "preview.tex"], cwd=folder, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-2000:]
    return (folder / "preview.log").read_text(errors="replace")


@pytest.mark.parametrize("case", ["fixtures", "three-6k-systems", "references", "marked"])
def test_every_table_fits_a_two_column_page_without_resizing(tmp_path, case):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    committed = Path(__file__).resolve().parent.parent / "results"
    runs = {"fixtures": tuple(str(FIXTURES / r) for r in RUNS),
            "three-6k-systems": tuple(str(committed / r) for r in (
                "dev-6k-plain-confidence", "dev-6k-search-confidence", "imported-nous-6k")),
            "references": (str(committed / "dev-6k-search-confidence"),
                           str(committed / "imported-gemini-2.5-flash-lite-6k")),
            "marked": tuple(str(FIXTURES / r) for r in RUNS)}[case]
    make_tables(runs, out=tmp_path, formats=("latex",),
                references=None if case in ("three-6k-systems", "references") else REFERENCES,
                baseline=str(BASELINE) if case == "marked" else None,
                with_references=case in ("references", "marked"))
    _assert_fits(_compile(tmp_path))
    fc = (tmp_path / "mab-fc.tex").read_text()
    if case == "three-6k-systems":
        # three systems of 6K runs fit one column of the page
        assert "\\begin{table}[tbp]" in fc
        assert fc.count("\\\\\n") - fc.count("\\end{tabular} \\\\") <= 9
    elif case == "references":
        # the published rows make it taller than a page: it breaks across pages
        assert "\\begin{longtable}" in fc
    else:
        assert "\\begin{table*}[tbp]" in fc


def _assert_fits(log: str) -> None:
    """No table wider than its place, and none taller than the page (a float taller than the
    page runs past its bottom, and its last rows are lost: verification U35)."""
    for sign in ("Overfull \\hbox", "Float too large"):
        assert sign not in log, log[log.index(sign):][:600]


def test_mab_ref_breaks_across_pages_and_loses_no_row(tmp_path):
    """Verification U35: mab-ref, a table* of every published figure, was "Float too large for
    page by 770pt" in its preview.tex, and its rows after "HippoRAG-v2" were lost. It is a
    longtable now, its header repeated on each page; every row is in the file."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    committed = Path(__file__).resolve().parent.parent / "results"
    make_tables((str(committed / "dev-6k-search-confidence"),), out=tmp_path,
                formats=("latex", "md"), names=("mab-ref",))
    tex = (tmp_path / "mab-ref.tex").read_text()
    assert "\\begin{longtable}" in tex and "\\endhead" in tex
    assert "\\usepackage{longtable}" in (tmp_path / "preview.tex").read_text()
    _assert_fits(_compile(tmp_path))
    if shutil.which("pdftotext") is None:
        return
    # every row is on a page: the last published one and the run's row after them
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "preview.tex"],
                   cwd=tmp_path, capture_output=True, check=True)
    text = subprocess.run(["pdftotext", "preview.pdf", "-"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout
    rows = [line.split(" | ")[0].removeprefix("| ")
            for line in (tmp_path / "mab-ref.md").read_text().splitlines()
            if line.startswith("| ") and "---" not in line]
    assert rows[-1] == "factres search" and rows[-3].startswith("P-Mem, multi-hop")
    lines = text.splitlines()
    assert "factres search" in lines and any(line.startswith("P-Mem, multi-hop")
                                             for line in lines)


def test_mab_fc_with_every_column_fits_the_page(tmp_path):
    """Verification U36: --columns run,plan-sets,mode,reader,split,commit made mab-fc a table*
    125pt too wide in its preview.tex. Its text columns wrap now, in smaller type when they
    must (report/page_fit.py)."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    committed = Path(__file__).resolve().parent.parent / "results"
    make_tables(tuple(str(committed / r) for r in (
        "dev-6k-search-confidence", "dev-6k-plain-confidence", "imported-nous-6k")),
        out=tmp_path, formats=("latex",), names=("mab-fc",),
        columns=("run", "plan-sets", "mode", "reader", "split", "commit"))
    tex = (tmp_path / "mab-fc.tex").read_text()
    assert "\\begin{table*}[tbp]" in tex and "p{" in tex
    _assert_fits(_compile(tmp_path))


def test_preview_document_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    make_tables(tuple(str(FIXTURES / r) for r in RUNS), out=tmp_path, formats=("latex",),
                references=REFERENCES)
    _assert_fits(_compile(tmp_path))


def test_preview_with_baseline_marks_and_references_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    make_tables(tuple(str(FIXTURES / r) for r in RUNS), out=tmp_path, formats=("latex",),
                names=("mab-fc",), references=REFERENCES, baseline=str(BASELINE),
                with_references=True)
    _compile(tmp_path)
    # no character the fonts lack (printed as "?"): the arrows are math symbols
    assert "?" not in (tmp_path / "mab-fc.tex").read_text().split(r"\toprule")[1]


def test_baseline_marks_cells_by_the_exact_test_in_its_direction():
    (fc,), _ = build(gather(tuple(str(FIXTURES / r) for r in RUNS[:3])), ("mab-fc",),
                     baseline=outcomes(read_run(BASELINE)))
    # three sizes: a row per run and kind, columns 6K, 32K, 262K and the mean
    assert fc.headers == ("system", "kind", "6K", "32K", "262K", "mean")
    marks, label = {}, ""
    for row in fc.rows:
        label = row[0].text.rstrip("†‡") or label
        marks[(label, row[1].text)] = [c.mark for c in row[2:]]
    # dev-small against the baseline: sh 6K 9 questions only it answers (p = 2/2^9), mh 6K 4
    # only the baseline answers (p = 0.125, no mark), sh 32K 8 (p = 2/2^8), mh 32K 6 the
    # baseline's (p = 2/2^6 = 0.03125); means: 17 against 0, 10 against 0
    assert marks[("factres search", "sh")] == ["↑", "↑", "", "↑"]
    assert marks[("factres search", "mh")] == ["", "↓", "", "↓"]
    # dev-plain-dirty: sh 10 against 0, mh 7 against 0 for the baseline (p = 2/2^7)
    assert marks[("factres plain", "sh")] == ["↑", "", "", "↑"]
    assert marks[("factres plain", "mh")] == ["↓", "", "", "↓"]
    # unscored: never tested
    assert marks[("factres search + ollama:qwen2.5:3b", "sh")] == [""] * 4
    assert fc.notes[-1] == Note(("baseline: ", "dev-weak", " (", "weak, plain",
                                 "); its row is not in the table."))


def test_the_baseline_row_itself_is_not_marked_and_a_bad_baseline_is_refused(tmp_path):
    folders = gather((str(FIXTURES / "dev-small"), str(BASELINE)))
    (fc,), _ = build(folders, ("mab-fc",), baseline=outcomes(read_run(BASELINE)))
    assert fc.headers == ("system", "sh", "mh", "sh", "mh", "sh", "mh")
    assert [c.mark for c in fc.rows[1][1:]] == [""] * 6
    assert fc.notes[-1] == Note(("baseline: ", "dev-weak", " (", "weak, plain", ")."))
    with pytest.raises(InputError, match="run test-262k-unfrozen is unscored"):
        make_tables((str(FIXTURES / "dev-small"),), out=tmp_path / "t",
                    baseline=str(FIXTURES / "test-262k-unfrozen"))
    assert not (tmp_path / "t" / "mab-fc.md").exists()


def test_baseline_with_other_gold_for_a_question_is_refused(tmp_path):
    import orjson
    changed = tmp_path / "weak-other-gold"
    shutil.copytree(BASELINE, changed)
    lines = (changed / "predictions.jsonl").read_bytes().splitlines()
    row = orjson.loads(lines[2])
    row["gold"] = ["something else"]
    lines[2] = orjson.dumps(row, option=orjson.OPT_SORT_KEYS)
    (changed / "predictions.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError) as err:
        build(gather((str(FIXTURES / "dev-small"),)), ("mab-fc",),
              baseline=outcomes(read_run(changed)))
    assert str(err.value) == (f"{FIXTURES / 'dev-small' / 'predictions.jsonl'}: runs "
                              "weak-other-gold and dev-small disagree on question "
                              "'factconsolidation_sh_6k_no2': its gold is ['something else'] "
                              "in weak-other-gold and ['answer 2'] in dev-small (expected runs "
                              "over the same rows (one source, question and gold per question "
                              "id))")


def test_references_in_mab_fc_are_a_group_of_their_own_under_a_heading():
    (fc,), _ = build(gather((str(FIXTURES / "dev-small"),)), ("mab-fc",),
                     references=REFERENCES, with_references=True)
    assert fc.group_titles == ("", paper_tables.REFERENCES_TITLE)
    runs, refs = fc.groups
    # every size some row fills: 6K and 32K (dev-small), 262K (System D): a row per kind
    assert fc.headers == ("system", "kind", "6K", "32K", "262K", "mean")
    assert [(r[0].text, r[1].text) for r in runs] == [("factres search", "sh"), ("", "mh")]
    assert [(r[0].text, r[0].mark) for r in refs[::2]] == [
        ("System A & B", ""), ("System C", "‡*"), ("System D", "†")]
    assert [c.text for c in refs[0][2:]] == ["91.5", "80", "n/r", "85.75"]
    assert [c.text for c in refs[1][2:]] == ["12", "—", "n/r", "—"]
    # their protocol, reader and source: a footnote, as no such column is asked for
    assert ("References: System A & B: protocol one, reader model-1, source P, Table 2; "
            "System C: protocol two, reader model_2, source Q, text; System D: protocol one, "
            "reader —, source Q, Table 1.") in [plain(n) for n in fc.notes]
    (shown,), _ = build(gather((str(FIXTURES / "dev-small"),)), ("mab-fc",),
                        references=REFERENCES, with_references=True,
                        columns=("mode", "reader", "commit"))
    assert [(r[0].text, r[1].text, r[2].text, r[3].text) for r in shown.groups[1][::2]] == [
        ("System A & B", "one", "model-1", "P, Table 2"), ("System C", "two", "model_2", "Q, text"),
        ("System D", "one", "—", "Q, Table 1")]
    notes = " ".join(plain(n) for n in fc.notes)
    assert "† on a reference's name: quoted second-hand, P's figures as source Q quotes them." \
        in notes
    assert "‡ on a reference's name: a vendor's claim, V's own figures, quoted in source Q." \
        in notes
    assert "* on a reference's name: not checked against the transcription." in notes
    assert fc.sources == ("dev-small", "references.json")
    # without the option mab-fc is as before: no reference row, no title
    (bare,), _ = build(gather((str(FIXTURES / "dev-small"),)), ("mab-fc",),
                       references=REFERENCES)
    assert bare.group_titles == () and len(bare.rows) == 1


def test_group_titles_and_notes_quoting_names_are_escaped_per_format():
    t = Table("t", "", ("name", "x"), "lr", (((Cell("a"), Cell("1")),), ((Cell("b"),
                                                                           Cell("2")),)),
              notes=(Note(("baseline: ", "x|*y_z", ".")),), comment=False,
              group_titles=("", "others"))
    assert markdown_table(t) == ("| name | x |\n|---|--:|\n| a | 1 |\n| *others* | |\n"
                                 "| b | 2 |\n\nbaseline: x\\|\\*y_z.\n")
    tex = latex_table(t)
    assert "\\midrule\n\\multicolumn{2}{@{}l}{\\textit{others}} \\\\\nb & 2 \\\\" in tex
    assert "baseline: x|*y\\_z." in tex
    with pytest.raises(ValueError, match="1 group titles for 2 groups"):
        Table("t", "", ("a",), "l", (((Cell("x"),),), ((Cell("y"),),)), group_titles=("",))


def test_preview_inputs_every_table_written(tmp_path):
    report = make_tables(tuple(str(FIXTURES / r) for r in RUNS), out=tmp_path,
                         references=REFERENCES)
    assert sorted(p.name for p in report.written) == sorted(
        [f"{t}.{e}" for t in paper_tables.TABLES for e in ("md", "tex")] + ["preview.tex"])
    preview = (tmp_path / "preview.tex").read_text()
    for t in paper_tables.TABLES:
        assert "\\input{" + t + ".tex}" in preview
    assert "\\usepackage{booktabs}" in preview


def test_default_reads_every_folder_of_a_known_kind():
    folders = gather((), results=FIXTURES)
    assert [f.name for f in folders] == ["dev-plain-dirty", "dev-small", "heldout-other",
                                         "oracle-ceiling-sizes", "oracle-ceiling-small",
                                         "oracle-nbest-dev-small", "test-262k-unfrozen"]
    _, notes = build(folders, references=REFERENCES)
    assert notes == ["mab-fc: heldout-other left out: no MemoryAgentBench FactConsolidation "
                     "source (factconsolidation_sh/mh_<size>)",
                     "mab-ref: test-262k-unfrozen left out: unscored (a test run)"]


def test_a_folder_of_another_kind_named_explicitly_is_an_error():
    with pytest.raises(InputError, match="not a folder factres tables reads"):
        gather((str(FIXTURES / "oracle-paths-small"),))


def test_a_table_without_input_is_skipped_or_an_error_when_asked_for():
    folders = gather((str(FIXTURES / "dev-small"),))
    tables, notes = build(folders, references=REFERENCES)
    assert [t.table_id for t in tables] == ["mab-fc", "mab-ref"]
    assert notes == ["mab-nbest: no oracle nbest folder (nbest.json) to build it from (make one with "
        "`factres oracle nbest RUN` (it writes <results>/oracle-nbest-RUN/) and name it); "
                     "not written",
                     "mab-ceiling: no oracle ceiling folder (ceiling.json) to build it from (make one "
        "with `factres oracle ceiling [--data ROWS]` (it writes <results>/oracle-ceiling-<sizes>/) "
        "and name it); "
                     "not written"]
    with pytest.raises(InputError) as err:
        build(folders, ("mab-ceiling",), explicit=True, references=REFERENCES)
    assert str(err.value) == ("table mab-ceiling: no oracle ceiling folder "
                              "(ceiling.json) to build it from (make one with `factres oracle "
                              "ceiling [--data ROWS]` (it writes "
                              "<results>/oracle-ceiling-<sizes>/) and name it) (expected at least one oracle "
                              "ceiling folder (ceiling.json))")


def test_dirty_and_unfrozen_runs_are_marked():
    folders = gather(tuple(str(FIXTURES / r) for r in RUNS[:3]))
    (fc,), _ = build(folders, ("mab-fc",), columns=("commit",))
    assert [row[1] for row in fc.rows[::2]] == [Cell("89abcde", mark="†"), Cell("0123456"),
                                                Cell("fedcba9", mark="†‡")]
    # without the commit column, its marks go on the system's name
    (fc,), _ = build(folders, ("mab-fc",))
    assert [(row[0].text, row[0].mark) for row in fc.rows[::2]] == [
        ("factres plain", "†"), ("factres search", ""),
        ("factres search + ollama:qwen2.5:3b", "†‡")]


def test_rewriting_tables_replaces_them(tmp_path):
    (tmp_path / "mab-ref.md").write_text("old\n")
    runs = tuple(str(FIXTURES / r) for r in RUNS)
    make_tables(runs, out=tmp_path, formats=("md",), names=("mab-ref",), references=REFERENCES)
    assert (tmp_path / "mab-ref.md").read_text() == (GOLDEN / "mab-ref.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mab-ref.md"]   # no temp files


def test_mab_ref_marks_provenance_and_sets_factres_stale_rates_beside_the_published():
    (table,), notes = build(gather((str(FIXTURES / "dev-small"),)), ("mab-ref",),
                            references=REFERENCES)
    assert notes == [] and table.sources == ("references.json", "dev-small")
    # the columns some row fills: 64K none, 32K's and 262K's stale rates none
    assert table.headers == ("system (reader/model)", "sh", "mh", "stale", "sh", "mh", "stale",
                             "sh", "mh", "sh", "mh", "source")
    assert [label for label, _ in table.header_groups] == ["", "6K", "32K", "262K", "mean", ""]
    assert table.group_titles == ("protocol one", "protocol two",
                                  "runs scored by factres (protocols factres and imported)")
    rows = {row[0].text: row for row in table.rows}
    assert [c.text + c.mark for c in rows["System A & B (model-1)"][1:7]] == [
        "91.5", "12", "4.0", "80", "—", "—"]                 # as printed; a dash; no 0
    assert rows["System A & B (model-1)"][9].text == "85.75"    # the source's precision, kept
    assert [rows[s][0].mark for s in ("System D", "System C (model_2)")] == ["†", "‡*"]
    assert [c.text for c in rows["System C (model_2)"][1:4]] == ["n/t", "n/t", "n/r"]
    factres = rows["factres search"]
    assert (factres[3], factres[6].text) == (Cell("12.5", "(1/8)"), "0.0")
    assert factres[7].text == "n/r" and factres[-1].text == "dev-small"
    assert table.groups[-1] == (factres,)                  # after the references, alone
    notes = " ".join(plain(n) for n in table.notes)
    assert "† quoted second-hand: P's figures as source Q quotes them." in notes
    assert "‡ vendor claim: V's own figures, quoted in source Q." in notes
    assert ("Stale denominator of source P: questions whose gold is a final value (n = 50 at "
            "6K, 40 at 32K).") in notes
    assert "factres's stale denominator: single-hop questions" in notes
    assert "Not transcribed: its own figures (Untouched, arXiv:1111.11111)" in notes


def test_table_model_checks_its_shape():
    with pytest.raises(ValueError, match="a row has 1 cells for 2 columns"):
        Table("t", "", ("a", "b"), "lr", (((Cell("x"),),),))
    with pytest.raises(ValueError, match="header groups span 3 of 2 columns"):
        Table("t", "", ("a", "b"), "lr", (), (("g", 3),))


def test_markdown_and_latex_agree_on_cells():
    t = Table("t", "cap", ("name", "x"), "lr",
              (((Cell("a_b|c"), Cell("1.0", "[0.5, 2.0]", "†")),),), notes=("† note",))
    assert markdown_table(t) == ("<!-- t: cap -->\n| name | x |\n|---|--:|\n"
                                 "| a_b\\|c | 1.0† [0.5, 2.0] |\n\n† note\n")
    assert ("a\\_b|c & \\begin{tabular}[t]{@{}r@{}}1.0\\textsuperscript{\\dag}\\\\"
            "{\\scriptsize [0.5, 2.0]}\\end{tabular} \\\\") in latex_table(t)
    assert ("\\multicolumn{2}{@{}l}{\\makebox[0pt][l]{\\footnotesize \\textsuperscript{\\dag} "
            "note}} \\\\") in latex_table(t)


def _ceiling_folder(tmp_path, name, payload):
    import orjson
    folder = tmp_path / name
    folder.mkdir()
    (folder / "ceiling.json").write_bytes(orjson.dumps(payload))
    return str(folder)


def test_ceiling_groups_rows_by_size_and_marks_what_is_not_proven():
    """A group of rows per size: as many columns for three sizes as for one."""
    (table,), notes = build(gather((str(FIXTURES / "oracle-ceiling-sizes"),)), ("mab-ceiling",))
    assert notes == []
    assert table.headers == ("size", "questions", "n", "gold path", "latest wins", "optimum",
                             "contested keys")
    assert [[c.text + c.mark for c in row] for row in table.groups[2]] == [
        ["262K", "multi-hop", "10", "10", "6", "7§", "4"],
        ["262K", "single-hop", "10", "10", "8", "9§", "2"],
        ["262K", "both (one store)", "20", "20", "14", "16§", "5"]]
    assert [g[0][0].text for g in table.groups] == ["32K", "64K", "262K"]
    assert plain(table.notes[0]) == "data: factconsolidation."
    assert table.notes[-1].startswith("§ not proven optimal")


def test_ceiling_leaves_out_an_old_folder_solved_across_haystacks(tmp_path):
    import orjson
    old = orjson.loads((FIXTURES / "oracle-ceiling-small" / "ceiling.json").read_bytes())
    old["per_source"]["factconsolidation_mh_32k"] = old["per_source"]["factconsolidation_mh_6k"]
    for name in ("questions", "with_gold_path", "latest_wins", "optimal"):   # totals agree
        old[name] += old["per_source"]["factconsolidation_mh_32k"][name]
    folders = gather((_ceiling_folder(tmp_path, "old-two-sizes", old),
                      str(FIXTURES / "oracle-ceiling-small")))
    (table,), notes = build(folders, ("mab-ceiling",))
    assert notes == ["mab-ceiling: old-two-sizes left out: its optimum was solved across "
                     "haystacks (written before per-haystack solving); run factres oracle "
                     "ceiling again"]
    assert table.sources == ("oracle-ceiling-small",)


def test_ceiling_cell_given_twice_is_taken_from_the_first_folder(tmp_path):
    import orjson
    again = orjson.loads((FIXTURES / "oracle-ceiling-sizes" / "ceiling.json").read_bytes())
    # another optimum for the 32K sources (still within the reader's bounds: at least latest
    # wins), the haystack and the totals summing to them
    again["per_source"] = {s: dict(v, optimal=v["latest_wins"])
                           for s, v in again["per_source"].items() if s.endswith("_32k")}
    figures = ("questions", "with_gold_path", "latest_wins", "optimal")
    sums = {name: sum(v[name] for v in again["per_source"].values()) for name in figures}
    again["per_haystack"] = {h: dict(v, **sums, bound=sums["optimal"])
                             for h, v in again["per_haystack"].items() if v["size"] == "32k"}
    again.update(sums, bound=sums["optimal"], status="OPTIMAL")
    # written as an older oracle did, without its components (the reader adds those up)
    del again["components"]
    folders = gather((str(FIXTURES / "oracle-ceiling-sizes"),
                      _ceiling_folder(tmp_path, "again", again)))
    (table,), notes = build(folders, ("mab-ceiling",))
    assert notes == [f"mab-ceiling: again: factconsolidation {kind} 32k already given by an "
                     "earlier folder; that one kept" for kind in ("mh", "sh", "store")]
    assert table.rows[0][5].text == "9"


def test_mab_fc_names_each_run_and_says_which_sources_it_left_out(tmp_path):
    """Two runs of one configuration are told apart by the run column; a source that is no
    official FactConsolidation source is named in a note, never dropped without a word."""
    import orjson
    from test_oracle_paths import write_tiny

    from resolver.run.config import RunConfig
    from resolver.run.runs import execute
    rows = orjson.loads(write_tiny(tmp_path).read_bytes())["data"]
    own = dict(rows[1], metadata={"source": "my_own_sh_6k", "qa_pair_ids": [
        f"my_own_sh_6k_no{i}" for i in range(len(rows[1]["questions"]))]})
    data = tmp_path / "mixed.json"
    data.write_bytes(orjson.dumps({"data": rows + [own]}))
    results = tmp_path / "results"
    for run_id in ("mixed-a", "mixed-b"):
        execute(RunConfig(data=(str(data),)), results=results, run_id=run_id)
    (fc,), notes = build(gather(("mixed-a", "mixed-b"), results), ("mab-fc",))
    (runs,) = fc.groups
    # one label twice: numbered, and a note says how to name them; the run ids in a footnote
    assert [r[0].text for r in runs] == ["factres search", "factres search (2)"]
    assert [r[1:] for r in runs][0] == [r[1:] for r in runs][1]      # same configuration
    assert "Rows: factres search: run mixed-a," in plain(fc.notes[1])
    assert notes.pop(0) == ("mab-fc: 1 label(s) name more than one run (factres search): "
                            "numbered (2), (3), ...; name them with --label RUN=TEXT or "
                            "`factres run --name`")
    assert notes == [f"mab-fc: mixed-{x}: 1 source left out of its row, not an official "
                     "FactConsolidation source (factconsolidation_sh/mh_<size>): my_own_sh_6k"
                     for x in "ab"]
    # the single-hop mean would mix in my_own_sh_6k: left empty; the multi-hop one is shown
    assert fc.headers == ("system", "sh", "mh")      # one size: no mean
    assert runs[0][1].text != "—" and runs[0][2].text != "—"
