"""`factres explain RUN QID ...`: the reading, the winning path hop by hop, rival paths with
their score terms side by side, and where the gold is; for resolver runs and imported runs.

The rows are invented for these tests (a small multi-hop source over a hand-written context)."""
from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from oracle.cli import main
from oracle.explain import WIDTH, explain, render
from oracle.misses import analyse as misses
from resolver.run.config import RunConfig
from resolver.run.runs import execute

CONTEXT = """Here is a list of facts:
0. Tova Lind is a citizen of Norland.
1. The capital of Norland is Brimvik.
2. Kari Holm is a citizen of Ostmark.
3. The capital of Ostmark is Ostby.
4. Kari Holm is a citizen of Vesland.
5. Pell Arne is married to Tova Lind.
6. The name of the current head of state in Norland is Pell Arne.
7. Brimvik is located in the continent of Europe."""
QUESTIONS = [
    # answered right, along latest versions
    ("mh_ok", "Which city is the capital of the country Tova Lind is a citizen of?", "Brimvik"),
    # the search takes an older version to reach a city; the gold is the latest country, which
    # a rival candidate reaches: a selection error
    ("mh_sel", "What is the capital of the country Kari Holm is a citizen of?", "Vesland"),
    # no candidate reaches the gold
    ("mh_none", "Who is Tova Lind married to?", "Europe"),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    rows = folder / "rows.json"
    rows.write_text(json.dumps([{
        "context": CONTEXT, "questions": [q for _, q, _ in QUESTIONS],
        "answers": [[g] for _, _, g in QUESTIONS],
        "metadata": {"source": "factconsolidation_mh_6k",
                     "qa_pair_ids": [qid for qid, _, _ in QUESTIONS]}}]), "utf-8")
    return execute(RunConfig(data=(str(rows),)), results=folder / "results", run_id="small")


def _by_qid(run, *qids):
    return {e["qid"]: e for e in explain(run.path, list(qids))}


def test_a_right_answer_is_explained_hop_by_hop(run):
    e = _by_qid(run, "mh_ok")["mh_ok"]
    assert e["em"] == 1 and e["prediction"] == "Brimvik"
    assert e["reading"]["bases"] == ["Tova Lind"]
    assert (e["reading"]["asked_type"], e["reading"]["type_word"]) == ("city", "city")
    assert {"relation": "capital", "cue": "capital", "weight": 1.0, "words": "capital",
            "start": 4, "end": 5} in e["reading"]["spans"]
    winner = e["winner"]
    assert winner["relations"] == ["citizenship", "capital"] and winner["gold"]
    first = winner["hops"][0]
    assert (first["subject"], first["object"], first["serial"], first["line"],
            first["version"], first["status"]) == ("Tova Lind", "Norland", 0, 2, 0, "active")
    assert first["text"] == "0. Tova Lind is a citizen of Norland."
    assert e["gold_among_candidates"] and e["gold_ranks"][0] == 1
    assert e["gold_paths"]["all_latest"] and e["gold_paths"]["shortest"][0]["pattern"] == "L L"


def test_a_selection_error_names_where_the_gold_was(run):
    e = _by_qid(run, "mh_sel")["mh_sel"]
    assert e["em"] == 0 and e["prediction"] == "Ostby"
    hop = e["winner"]["hops"][0]
    assert (hop["version"], hop["status"], hop["passed_over"]) == (1, "superseded", [[4, 6]])
    assert ["older-versions", -0.8] in e["winner"]["terms"]
    rival = next(r for r in e["rivals"] if r["answer"] == "Vesland")
    assert rival["gold"] and not rival["fits_type"] and rival["rank"] in e["gold_ranks"]
    assert len(e["rivals"]) <= 5
    text = render([e])
    assert "a selection error" in text
    assert "older-versions" in text and "versions passed over: serial 4 (line 6)" in text


def test_no_candidate_reaching_the_gold_is_said(run):
    e = _by_qid(run, "mh_none")["mh_none"]
    assert not e["gold_among_candidates"] and e["gold_ranks"] == []
    assert e["winner"]["hops"][0]["reverse"]
    text = render([e])
    assert "no candidate of the" in text and "(followed object to subject)" in text


def test_the_text_fits_a_100_column_terminal_and_shows_terms_side_by_side(run):
    text = render(explain(run.path, [q for q, _, _ in QUESTIONS]))
    assert all(len(line) <= WIDTH for line in text.splitlines())
    assert text.count("Reading (the current reader)") == 3
    table = text[text.index("score term"):]
    header = table.splitlines()[0].split()
    assert header[:2] == ["score", "term"] and header[2] == "c1"
    assert any(line.split()[0] == "total" for line in table.splitlines())


def test_a_plain_run_shows_its_path_without_scores(run):
    plain = execute(RunConfig(data=tuple(run.meta["data"]), mode="plain"),
                    results=run.path.parent,
                    run_id="small-plain")
    e = explain(plain.path, ["mh_ok"])[0]
    assert e["mode"] == "plain" and e["winner"]["relations"] == ["citizenship", "capital"]
    text = render([e])
    assert "plain execution of the plans in order" in text and "score term" not in text


def test_the_command_finds_the_run_by_id_and_prints_text_or_json(run, monkeypatch):
    runner = CliRunner()
    by_dir = runner.invoke(main, ["explain", "small", "mh_ok", "--results-dir",
                                  str(run.path.parent)], catch_exceptions=False)
    assert by_dir.exit_code == 0 and by_dir.output.startswith("mh_ok  (factconsolidation_mh_6k")
    monkeypatch.setenv("FACTRES_RESULTS", str(run.path.parent))
    as_json = runner.invoke(main, ["explain", "small", "mh_ok", "mh_sel", "--json"],
                            catch_exceptions=False)
    assert as_json.exit_code == 0
    rows = orjson.loads(as_json.output)
    assert [r["qid"] for r in rows] == ["mh_ok", "mh_sel"]


def test_an_unknown_question_or_run_is_one_clean_error(run, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["explain", str(run.path), "mh_okk"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: {run.path / 'predictions.jsonl'}: question 'mh_okk' is not in run small "
        "(close: mh_ok, mh_none)")
    import shutil
    shutil.copytree(run.path, tmp_path / "small")
    missing = runner.invoke(main, ["explain", "no-such-run", "mh_ok", "--results-dir",
                                   str(tmp_path)])
    assert missing.exit_code == 1
    assert missing.output.startswith(f"Error: no run 'no-such-run' in {tmp_path}/ (1 run there: "
                                     "small) or in ")
    assert missing.output.endswith("(expected a run id under the results folder (--results-dir, "
                                   "$FACTRES_RESULTS or ./factres-results) or the repository's "
                                   "committed results/, or a run folder path)\n")


def test_an_imported_run_is_set_against_the_gold_paths(run, tmp_path):
    # an imported run as `factres score` writes it: kind "imported", no traces
    from resolver.exchange.imported import score_files
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text('{"qid": "mh_ok", "prediction": "Norland"}\n', "utf-8")
    meta = orjson.loads((run.path / "meta.json").read_bytes())
    imported = score_files([predictions], data=meta["data"], name="some-model",
                           results=tmp_path / "results", run_id="imported")
    e = explain(imported.path, ["mh_ok"])[0]
    assert e["kind"] == "imported" and "winner" not in e and "rivals" not in e
    assert e["gold_paths"]["count"] >= 1
    assert e["prediction_on_gold_paths"] == [
        "where hop 1 of a gold path lands (citizenship): 1 hop short"]
    text = render([e])
    assert "imported from some-model" in text and "Candidates" not in text


def test_oracle_misses_names_the_command_that_explains_each_miss(run):
    # named as the results folder finds it; a folder its name does not find, by its path
    markdown = misses(run.path, run.path.parent).markdown
    assert "`factres explain small mh_sel mh_none`" in markdown
    assert f"`factres explain {run.path.resolve()} mh_sel mh_none`" in misses(run.path).markdown


def test_a_run_made_in_another_checkout_reads_the_bundled_data_of_the_same_sha256(tmp_path):
    import shutil
    from pathlib import Path

    from resolver.haystack import bundled_path
    committed = Path(__file__).resolve().parent.parent / "results" / "dev-6k-plain-typed-2"
    folder = tmp_path / "elsewhere"
    shutil.copytree(committed, folder)
    gone = "/no/such/checkout/resolver/data/fc/" + bundled_path().name
    meta = orjson.loads((folder / "meta.json").read_bytes())
    (old,) = meta["data"]
    meta["data"], meta["data_sha256"] = [gone], {gone: meta["data_sha256"][old]}
    (folder / "meta.json").write_bytes(orjson.dumps(meta))
    rows = [orjson.loads(line) for line in (folder / "predictions.jsonl").read_bytes().splitlines()]
    qid = next(r["qid"] for r in rows if not r["prediction"])
    e = explain(folder, [qid])[0]
    assert e["winner"] is None and e["rivals"] == [] and e["gold"]


def test_the_confidence_label_and_its_reasons_are_shown(run):
    (e,) = explain(run.path, ["mh_sel"])
    row = next(r for r in run.predictions if r["qid"] == "mh_sel")
    assert row["confidence"]["reasons"]
    assert e["confidence"] == row["confidence"]
    shown = render([e])
    assert f"confidence: {row['confidence']['label']}" in shown
    assert all(reason in " ".join(shown.split()) for reason in row["confidence"]["reasons"])


@pytest.mark.parametrize("name", ["dev-6k-search-nbest-2", "imported-nous-6k"])
def test_a_committed_run_explains_with_its_own_em_and_only_facts_of_its_store(name):
    # the checks that flag an edited file never flag the run's own files
    from pathlib import Path

    from resolver.results.reader import read_run
    run = read_run(Path(__file__).resolve().parent.parent / "results" / name)
    explanations = explain(run.path, [r["qid"] for r in run.predictions])
    assert [e["em"] for e in explanations] == [r["em"] for r in run.predictions]
    assert not any(e.get("not_in_store") for e in explanations)


def test_the_committed_miss_says_where_each_rank_went_and_what_the_marks_mean():
    """Issue 34, item 9: a rank missing from the candidates table is the same path found again
    (by another plan of a set, or another set), and the `ver` column and the [L L] marks are
    explained on screen."""
    from pathlib import Path
    committed = Path(__file__).resolve().parents[1] / "results" / "dev-6k-search-confidence"
    text = render(explain(str(committed), ["factconsolidation_mh_6k_no82"]))
    flat = " ".join(text.split())
    assert ("rank 2: the same path as c1, found again by plan set live:lexicon (each path is "
            "shown once, at its best rank)") in flat
    assert "ver: the version of its key the hop took (0 the latest, 1 the one before it" in flat
    assert "[ ]: per hop, L the latest version of its key, On an older one" in flat
    assert all(len(line) <= WIDTH for line in text.splitlines())
