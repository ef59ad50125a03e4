"""Loading haystacks in every supported layout, and the input problems the loader names."""
from __future__ import annotations

import sys

import orjson
import pytest

from resolver import haystack
from resolver.errors import InputError, MissingExtraError
from resolver.haystack import BUNDLED, bundled_path, load

CONTEXT = "Here is a list of facts:\n0. Paris is located in the country of France.\n" \
          "1. Paris is located in the country of Italy.\n"


def _row(source="factconsolidation_sh_6k", context=CONTEXT, n=2):
    return {"context": context, "questions": [f"Q{i}?" for i in range(n)],
            "answers": [[f"A{i}"] for i in range(n)],
            "metadata": {"source": source, "qa_pair_ids": [f"{source}_no{i}" for i in range(n)]}}


def _shape(dataset, gold):
    return ([(q.qid, q.source, q.index, q.text, q.kind, q.size) for q in dataset.questions],
            dict(gold.answers), len(dataset.haystacks))


EXPECTED = ([("factconsolidation_sh_6k_no0", "factconsolidation_sh_6k", 0, "Q0?", "sh", "6k"),
             ("factconsolidation_sh_6k_no1", "factconsolidation_sh_6k", 1, "Q1?", "sh", "6k")],
            {"factconsolidation_sh_6k_no0": ("A0",), "factconsolidation_sh_6k_no1": ("A1",)}, 1)


@pytest.mark.parametrize("layout", ["row", "list", "data"])
def test_json_layouts(tmp_path, layout):
    obj = {"row": _row(), "list": [_row()], "data": {"data": [_row()]}}[layout]
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps(obj))
    assert _shape(*load([path])) == EXPECTED


def test_jsonl(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(orjson.dumps(_row()) + b"\n\n")
    assert _shape(*load([path])) == EXPECTED


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([_row()]), path)
    assert _shape(*load([path])) == EXPECTED


def test_parquet_without_the_extra_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    path = tmp_path / "rows.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(MissingExtraError) as err:
        load([path])
    assert str(err.value) == (f"{path}: reading .parquet needs pyarrow; install it with "
                              "`pip install 'factres[parquet]'`")


def test_bare_context_txt(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_text(CONTEXT, encoding="utf-8")
    dataset, gold = load([path])
    assert dataset.questions == [] and gold.answers == {}
    (stack,) = dataset.haystacks.values()
    assert stack.store.current("paris", "located_in_country").object == "Italy"


def test_rows_of_one_size_share_one_context_parsed_once(tmp_path, monkeypatch):
    calls = []
    import resolver.text.cache as cache
    real = cache.load_parse
    monkeypatch.setattr(cache, "load_parse", lambda *a, **k: calls.append(1) or real(*a, **k))
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps([_row("factconsolidation_sh_6k"),
                                   _row("factconsolidation_mh_6k")]))
    dataset, _ = load([path])
    assert len(dataset.questions) == 4 and len(dataset.haystacks) == 1 and calls == [1]
    assert {q.kind for q in dataset.questions} == {"sh", "mh"}


def test_bundled_6k_rows():
    dataset, gold = load([bundled_path()])
    assert dataset.sources == ["factconsolidation_mh_6k", "factconsolidation_sh_6k"]
    assert len(dataset.questions) == 200 == len(gold.answers)
    (stack,) = dataset.haystacks.values()
    assert len(stack.parse.facts) == 455


def test_questions_carry_no_answers():
    dataset, _ = load([bundled_path()])
    assert not any(hasattr(q, "answers") or hasattr(q, "answer") for q in dataset.questions)


def test_not_utf8_names_the_byte_and_line(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_bytes(b"Here is a list of facts:\n0. M\xfcnchen is owned by B.\n")
    with pytest.raises(InputError) as err:
        load([path])
    assert str(err.value) == (f"{path}:2: not UTF-8: byte 0xfc at offset 29 "
                              "(expected UTF-8 text)")


def test_crlf_and_bom_in_a_file_are_handled_and_noted(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_bytes(b"\xef\xbb\xbf" + CONTEXT.replace("\n", "\r\n").encode())
    (stack,) = load([path])[0].haystacks.values()
    assert stack.parse.has_header and len(stack.parse.facts) == 2
    assert stack.parse.facts[0].text == "0. Paris is located in the country of France."
    assert stack.parse.notes == ("byte-order mark removed", "CRLF line endings read as LF")


def test_crlf_inside_a_json_row_is_handled(tmp_path):
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps(_row(context=CONTEXT.replace("\n", "\r\n"))))
    (stack,) = load([path])[0].haystacks.values()
    assert len(stack.parse.facts) == 2
    assert stack.parse.notes == ("CRLF line endings read as LF",)


def test_empty_file(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_text("")
    with pytest.raises(InputError, match="empty input: no header and no fact lines"):
        load([path])


@pytest.mark.parametrize("name, content, message", [
    ("a.csv", b"x", "unknown file type '.csv' (expected .json, .jsonl, .parquet or .txt)"),
    ("a.json", b"{", "not valid JSON"),
    ("a.json", b'{"questions": []}', "row 0: no string 'context' ('context' is missing)"),
    ("a.json", b"3", "JSON top level is neither an object nor a list"),
])
def test_bad_files_are_named(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load([path])


def test_missing_file_and_no_files():
    with pytest.raises(InputError, match="no such file"):
        load(["/nonexistent/ctx.txt"])
    with pytest.raises(InputError, match="no input files given"):
        load([])


def test_parse_report_of_a_bundled_context():
    (report,) = haystack.parse_report(bundled_path(BUNDLED["32k"]))
    assert (report["facts"], report["unparsed"], report["lines"], report["header"]) == \
        (2310, 0, 2311, True)
    assert sum(report["relations"].values()) == 2310
