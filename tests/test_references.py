"""The published references (resolver/data/references.json) against the transcription they were
copied from: a committed copy of PUBLISHED.md (tests/data/references/; tests never read
../shared). Every figure of its Markdown tables is in the file with the same value, as printed
("100" stays "100", "68.0" stays "68.0"), and nothing else is; every figure read from text sits
in a passage quoted verbatim from the transcription; and the schema refuses a malformed file,
naming the file and the field."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import orjson
import pytest

from resolver.errors import InputError
from resolver.report.references import NOT_REPORTED, SIZES, figure_text, load_references

DATA = Path(__file__).parent / "data"
TRANSCRIPTION = DATA / "references" / "PUBLISHED.md"
FIXTURE = DATA / "tables" / "references.json"
DASHES = ("", "—", "–")            # an empty cell or a dash: the source gives no figure there
REFERENCE_TABLE = 'reference table "Published reference points at 262K"'


@pytest.fixture(scope="module")
def refs():
    shown, refs = load_references()
    assert shown == "resolver/data/references.json"
    return refs


def _flat(text: str) -> str:
    return " ".join(text.split())


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of every Markdown table, cells stripped."""
    tables, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if block:
            assert re.fullmatch(r"[-:]+", block[1][0]), block[1]      # the separator row
            tables.append((block[0], block[2:]))
            block = []
    return tables


def _figure_key(header: str) -> str | None:
    """A table column's figure: "6K SH" -> "6k.sh", "pooled MH" -> "pooled.mh",
    "stale 64K" -> "stale.64k"; None for a text column."""
    words = header.lower().split()
    if len(words) == 2 and words[0] in SIZES + ("pooled",) and words[1] in ("sh", "mh"):
        return f"{words[0]}.{words[1]}"
    if len(words) == 2 and words[0] == "stale" and words[1] in SIZES:
        return f"stale.{words[1]}"
    return None


def _numbers(text: str) -> list[str]:
    """Figures written in a passage: numbers standing alone, not a size or model ("6K", "35B",
    "gpt-4o"), not a count's whole ("94 of 100")."""
    return re.findall(r"(?<![\w.\-])(?<!of )\d+(?:\.\d+)?(?![\w.\-]|\.\d)", text)


def test_the_copy_is_the_transcription_the_file_names(refs):
    assert refs.transcription.test_copy == "tests/data/references/PUBLISHED.md"
    assert refs.transcription.file == "../shared/data/references/PUBLISHED.md"
    assert hashlib.sha256(TRANSCRIPTION.read_bytes()).hexdigest() == refs.transcription.sha256


def test_every_table_figure_is_in_the_file_with_the_same_value_and_nothing_else(refs):
    # the FactConsolidation tables (a column "system"); the probe tables are checked below
    tables = [t for t in _tables(TRANSCRIPTION.read_text("utf-8")) if t[0][0] == "system"]
    assert [len(rows) for _, rows in tables] == [2, 9, 10]
    by_row = {e.row: e for e in refs.references if e.row is not None}
    assert len(by_row) == sum(1 for e in refs.references if e.row is not None)   # unique rows
    seen, compared = set(), 0
    for header, rows in tables:
        keys = [_figure_key(h) for h in header]
        assert header[0] == "system" and sum(k is not None for k in keys) >= 4, header
        for cells in rows:
            entry = by_row[cells[0]]
            seen.add(entry.id)
            assert entry.checked, entry.id
            figures = entry.figures()
            assert set(figures) == {k for k in keys if k}, entry.id      # no cell more or less
            for head, key, cell in zip(header, keys, cells):
                if key is None:
                    continue
                value = figures[key]
                if cell in DASHES:
                    assert value == NOT_REPORTED, (entry.id, key)
                else:
                    assert figure_text(value) == cell, (entry.id, key)
                compared += 1
            if "reader" in header:
                assert entry.reader == cells[header.index("reader")], entry.id
            if "where in the paper" in header:
                where = cells[header.index("where in the paper")]
                assert entry.place in where and entry.quote in where, entry.id
    assert seen == {e.id for e in by_row.values()}     # every entry with a row is in a table
    assert compared == 2 * 10 + 9 * 4 + 10 * 9


def test_figures_read_from_text_are_in_their_quoted_passage(refs):
    text = _flat(TRANSCRIPTION.read_text("utf-8"))
    all_figures = {figure_text(v) for e in refs.references for v in e.figures().values()}
    quoted = [e for e in refs.references if e.quote is not None]
    assert len(quoted) >= 12
    for e in quoted:
        assert _flat(e.quote) in text, e.id
        numbers = _numbers(e.quote)
        written = [figure_text(v) for v in e.figures().values() if v != NOT_REPORTED]
        assert written and set(written) <= set(numbers), e.id
        # no figure of a quoted passage is left out of the file
        assert set(numbers) <= all_figures, (e.id, set(numbers) - all_figures)
        if e.row is None:
            assert e.checked, e.id


def test_the_text_passages_the_transcription_gives_figures_in_are_all_transcribed(refs):
    """Each passage of the transcription's text that carries figures is some entry's quote."""
    quotes = " ".join(_flat(e.quote) for e in refs.references if e.quote)
    for passage in ("on dev it moved multi-hop from 88 to 93",
                    "a one-version-per-key oracle 94 of 100", '"latest wins" 67',
                    "Pith reports multi-hop 95 / 83 / 84 / 68", "publishes 91 / 57 pooled",
                    "single-hop 71 -> 94 (stale 37.5 -> 3.1)", "flat 21 -> 23, P-Mem 43 -> 52"):
        assert passage in quotes, passage


def test_stale_rates_fit_their_denominators(refs):
    """The denominators are as the transcription states them, and every stale rate is a whole
    number of questions out of its size's denominator, to one decimal."""
    text = _flat(TRANSCRIPTION.read_text("utf-8"))
    den = refs.stale_denominators["B"]
    assert _flat(den.quote) in text and den.definition in den.quote
    assert den.n == {"6k": 64, "64k": 69, "262k": 71}
    rates = 0
    for e in refs.references:
        if e.stale is None:
            continue
        n = refs.stale_denominators[e.stale.denominator].n
        for size, value in e.stale.sizes.items():
            if value == NOT_REPORTED:
                continue
            assert any(abs(100 * k / n[size] - value) <= 0.05 + 1e-9
                       for k in range(n[size] + 1)), (e.id, size, value)
            rates += 1
    assert rates == 27 + 2       # Table 7 (three dashes) and the 35B passage


def test_pooled_figures_are_the_mean_over_the_four_sizes_where_all_are_given(refs):
    checked = 0
    for e in refs.references:
        if e.pooled is None or set(e.sizes) != set(SIZES):
            continue
        for kind in ("sh", "mh"):
            values = [getattr(e.sizes[s], kind) for s in SIZES]
            pooled = getattr(e.pooled, kind)
            if any(not isinstance(v, (int, float)) for v in values + [pooled]):
                continue
            assert abs(sum(values) / 4 - pooled) <= 0.05 + 1e-9, (e.id, kind)
            checked += 1
    assert checked == 3          # source A's main row (both kinds) and Pith's multi-hop


def test_provenance_is_marked(refs):
    by_id = {e.id: e for e in refs.references}
    for e in refs.references:
        if e.place == REFERENCE_TABLE:         # "as reported by their own sources and quoted"
            assert e.provenance in ("quoted", "vendor") and e.source == "A", e.id
        if e.row and "as reported by CAR" in e.row:
            assert (e.provenance, e.quoted_from) == ("quoted", "CAR"), e.id
    for vendor in ("Pith-table", "Pith-text", "Naive-text"):
        assert by_id[vendor].provenance == "vendor"
        assert refs.sources[by_id[vendor].quoted_from].kind == "vendor"
    assert {e.source for e in refs.references if e.provenance == "published"} == {"A", "B"}
    # source A gives no arXiv id or URL: said so, not invented
    assert refs.sources["A"].arxiv is None and refs.sources["A"].url is None
    assert "no arXiv id or URL" in refs.sources["A"].unlocated
    # source B has no 32K: not reported, never 0
    assert all("32k" not in e.sizes for e in refs.references if e.source == "B")


def test_every_probe_table_figure_is_in_the_file_with_the_same_value_and_nothing_else(refs):
    """P-Mem's Table 6 (an arm a column, a row per L) and Table 8 (an arm a row), read here
    with this file's own parser: every figure cell is one probe entry's figure, as printed."""
    text = TRANSCRIPTION.read_text("utf-8")
    probe_tables = [t for t in _tables(text) if t[0][0] != "system"]
    assert [(h[0], len(rows)) for h, rows in probe_tables] == [("L", 4), ("arm", 4)]
    (t6_head, t6_rows), (t8_head, t8_rows) = probe_tables
    assert "\nTable 6, current-value accuracy" in text and "\nTable 8, reversibility" in text
    by_arm = {(p.table, p.axis, p.arm): p for p in refs.probes if p.table is not None}
    compared = 0
    for col, head in enumerate(t6_head[1:], 1):
        if head == "read chars commit / raw":            # characters, not a percentage
            assert all("/" in row[col] for row in t6_rows)
            continue
        entry = by_arm.pop(("Table 6", "column", head))
        assert entry.probe == "revision" and entry.checked
        assert set(entry.figures) == {f"L={row[0]}" for row in t6_rows}
        for row in t6_rows:
            assert figure_text(entry.figures[f"L={row[0]}"]) == row[col], (head, row[0])
            compared += 1
    for row in t8_rows:
        entry = by_arm.pop(("Table 8", "row", row[0]))
        assert entry.probe == "retraction" and entry.checked
        assert set(entry.figures) == set(t8_head[1:])
        for head, cell in zip(t8_head[1:], row[1:]):
            assert figure_text(entry.figures[head]) == cell, (row[0], head)
            compared += 1
    assert by_arm == {} and compared == 4 * 5 + 4 * 5


def test_probe_figures_read_from_text_are_in_their_quoted_passage(refs):
    text = _flat(TRANSCRIPTION.read_text("utf-8"))
    quoted = [p for p in refs.probes if p.quote is not None]
    assert {p.probe for p in quoted} == {"conflict", "two-step"} and len(quoted) == 6
    figures = {figure_text(v) for p in quoted for v in p.figures.values()}
    for p in quoted:
        assert _flat(p.quote) in text, p.id
        numbers = _numbers(p.quote)
        assert {figure_text(v) for v in p.figures.values()} <= set(numbers), p.id
        assert set(numbers) - {"140"} <= figures, p.id       # n = 140 is a count, no figure
    assert refs.protocols["B-ALFWorld-Revision"].startswith("source B's ALFWorld-Revision")


def test_a_changed_probe_figure_is_refused_naming_the_entry_and_the_cell(tmp_path):
    doc = orjson.loads((Path(__file__).parent.parent / "resolver" / "data" /
                        "references.json").read_bytes())
    entry = next(p for p in doc["probes"] if p["id"] == "B-revision-raw")
    entry["figures"]["L=4"] = 44.9
    path = tmp_path / "resolver" / "data" / "refs.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(orjson.dumps(doc))
    (tmp_path / "tests" / "data" / "references").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "references" / "PUBLISHED.md").write_bytes(
        TRANSCRIPTION.read_bytes())
    with pytest.raises(InputError) as err:
        load_references(path)
    assert str(err.value) == (f"{path}: probe entry 'B-revision-raw' is marked checked, but its "
                              "figure 'L=4' is 44.9, and Table 6 has 42.9 (expected a checked "
                              "entry's figures as its quote and the transcription give them (or "
                              "checked: false))")
    entry["figures"]["L=4"] = 42.9
    conflict = next(p for p in doc["probes"] if p["id"] == "B-conflict-raw")
    conflict["figures"]["notices the conflict"] = 97.0
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError, match="probe entry 'B-conflict-raw' is marked checked, but "
                       "its figure 'notices the conflict' is 97.0, which its quote does not "
                       "give"):
        load_references(path)


def test_the_benchmark_papers_own_figures_are_named_as_not_transcribed(refs):
    assert [u.source for u in refs.untranscribed] == ["MAB"]
    assert refs.sources["MAB"].arxiv == "2507.05257"
    assert all(e.source != "MAB" for e in refs.references)
    assert all(None not in e.figures().values() for e in refs.references)   # nothing null
    assert all(e.checked for e in refs.references)


# ---- the schema refuses what it must ---------------------------------------------------------
_PROBE = {"id": "p", "probe": "revision", "arm": "commit", "source": "P", "protocol": "one",
          "place": "Table 6", "table": "Table 6", "axis": "column", "quote": None,
          "figures": {"L=1": 100.0}, "checked": False, "note": ""}

def _with(tmp_path, change) -> Path:
    doc = orjson.loads(FIXTURE.read_bytes())
    change(doc)
    path = tmp_path / "refs.json"
    path.write_bytes(orjson.dumps(doc))
    return path


def _entry(i: int, **fields):
    def change(doc):
        doc["references"][i].update(fields)
    return change


@pytest.mark.parametrize("change, message", [
    (_entry(0, sizes={"6k": {"sh": 101, "mh": None}}),
     'references.0.sizes.6k.sh: a figure is a percentage in [0, 100], "not reported" or null, '
     "not 101"),
    (_entry(0, sizes={"8k": {"sh": 1, "mh": 1}}),
     "references.0.sizes.8k: Input should be '6k', '32k', '64k' or '262k'"),
    (_entry(0, sizes={"6k": {"sh": "5", "mh": True}}),
     'references.0.sizes.6k.sh: a figure is a percentage in [0, 100], "not reported" or null, '
     "not '5'"),
    (_entry(0, sizes={"6k": {}}), 'references.0.sizes.6k: give "sh", "mh" or both'),
    (_entry(0, extra=1), "references.0.extra: Extra inputs are not permitted"),
    (_entry(0, checked=1), "references.0.checked: Input should be a valid boolean"),
    (_entry(0, protocol="three"),
     "references.0 (a): protocol 'three' is not defined (known: one, two)"),
    (_entry(0, source="Z"), "references.0 (a): source 'Z' is not defined (known: P, Q, U, V)"),
    (_entry(2, quoted_from=None),
     "references.2: quoted_from names whose figure a quoted or vendor entry repeats, and only "
     "then"),
    (_entry(1, checked=True), "references.1: a checked entry has no untranscribed (null) figure"),
    (_entry(0, row=None), "references.0: a figure comes from a table row (`row`) or a quoted "
                          "passage (`quote`)"),
    (_entry(0, reader=" "), "references.0.reader: String should match pattern '\\S'"),
    (_entry(2, id="a"), "references.2: id 'a' is used twice"),
    (lambda doc: doc["sources"]["Q"].update(unlocated=None),
     "sources.Q: a source names an arxiv id or a url, or says in `unlocated` that the "
     "transcription gives none"),
    (lambda doc: doc.update(schema="factres.references/1"),
     "schema: Input should be 'factres.references/2'"),
    (lambda doc: doc.update(probes=[_PROBE | {"axis": None}]),
     "probes.0: a figure of a table names its `table` and `axis`, a figure of text neither"),
    (lambda doc: doc.update(probes=[_PROBE | {"quote": "x"}]),
     "probes.0: a probe figure comes from a table (`table`) or a quoted passage (`quote`), one "
     "of the two"),
    (lambda doc: doc.update(probes=[_PROBE | {"probe": "drift"}]),
     "probes.0.probe: Input should be 'revision', 'retraction', 'conflict' or 'two-step'"),
    (lambda doc: doc.update(probes=[_PROBE | {"figures": {"L=1": 101}}]),
     'probes.0.figures.L=1: a figure is a percentage in [0, 100], "not reported" or null, '
     "not 101"),
    (lambda doc: doc.update(probes=[_PROBE | {"protocol": "nine"}]),
     "probes.0 (p): protocol 'nine' is not defined (known: one, two)"),
    (lambda doc: doc.update(probes=[_PROBE, _PROBE]), "probes.1: id 'p' is used twice"),
])
def test_malformed_references_name_file_and_field(tmp_path, change, message):
    path = _with(tmp_path, change)
    with pytest.raises(InputError) as err:
        load_references(path)
    assert str(err.value) == (f"{path}: {message} (expected a factres.references/2 file "
                              "(resolver/report/references.py))")


def test_a_missing_or_broken_file_is_named(tmp_path):
    with pytest.raises(InputError, match="no such references file"):
        load_references(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(InputError) as err:
        load_references(bad)
    assert str(err.value).startswith(f"{bad}: not JSON: ")
