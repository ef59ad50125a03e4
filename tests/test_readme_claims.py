"""The README's and the docs' numbers and claims, checked against the committed folders and the
code they describe: the README's headline figures, the dev results table (docs/results.md), the
quick start's table, which runs are current, the † marks, the dev and blind misses, the blind
set's first commit and author, the test command CI runs, the parse benchmark's repeat count,
and how to reproduce `dev-6k-plain`. The claims moved from the old README (kept as
tests/data/readme-before.md) to the docs pages; the checks followed them."""
from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from resolver.report.paper_tables import make_tables
from resolver.results.result_schema import loads_lines
from resolver.run.config import RunConfig
from resolver.run.runs import execute
from resolver.run.tables import score_table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
README = (ROOT / "README.md").read_text("utf-8")


def page(name: str) -> str:
    """A docs page (docs/<name>.md), or the README."""
    return README if name == "README" else (ROOT / "docs" / f"{name}.md").read_text("utf-8")


def section(title: str, name: str = "README") -> str:
    text = page(name)
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def meta(run: str) -> dict:
    return orjson.loads((RESULTS / run / "meta.json").read_bytes())


def metrics_rows(run: str) -> list[dict]:
    return orjson.loads((RESULTS / run / "metrics.json").read_bytes())["rows"]


def metrics(run: str) -> dict[str, dict]:
    rows = orjson.loads((RESULTS / run / "metrics.json").read_bytes())["rows"]
    return {r["label"]: r for r in rows}


def figure(x: float) -> str:
    """A share as the README writes it: 0.94 -> "94", 0.849375 -> "84.9"."""
    return f"{100 * x:.1f}".removesuffix(".0")


def cell(row: dict | None) -> str:
    if row is None:
        return "—"
    text = figure(row["em"])
    lo, hi = row["ci"]
    return text if lo == hi == row["em"] else f"{text} [{figure(lo)}, {figure(hi)}]"


def results_rows() -> list[list[str]]:
    """The rows of the section's first table (the committed dev and held-out runs)."""
    text = section("On the dev split", "results")
    table = text[text.index("| run | what |"):] + "\n\n"
    table = table[:table.index("\n\n")]
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in table.splitlines() if line.startswith("| `")]


def test_the_dev_results_table_matches_the_committed_runs():
    rows = results_rows()
    assert len(rows) == 7
    for run, _what, single, multi in rows:
        got = metrics(run.strip("`"))
        assert (single, multi) == (cell(got.get("pooled sh")), cell(got.get("pooled mh"))), run


def test_the_listed_runs_are_the_current_ones():
    """A listed run has no newer `-2` beside it; its meta.json records `protocol` exactly when
    its trace hops name their ledger status; the runs without are those the README calls
    originals; a `-2` run scores as its original, from a clean tree."""
    named = [r[0].strip("`") for r in results_rows()]
    text = " ".join(section("Which runs are current", "results").split())
    said = text[:text.index(" exist only as originals")]
    said = said[said.rindex(". ") + 2:]
    originals = set(re.findall(r"`([\w.-]+)`", said))
    assert originals and originals <= set(named)
    for run in named:
        assert not (RESULTS / f"{run}-2").exists(), f"{run} has a newer -2 beside it"
        recorded = "protocol" in meta(run)
        hops = [h for t in loads_lines((RESULTS / run / "traces.jsonl").read_bytes())
                if t["winner"] for h in t["winner"]["hops"]]
        assert all(("status" in h) == recorded for h in hops), run
        assert recorded == (run not in originals), run
        if run.endswith("-2"):
            original = run.removesuffix("-2")
            assert metrics(original)["pooled all"]["em"] == metrics(run)["pooled all"]["em"]
            assert meta(run)["git"]["dirty"] is False


def test_the_quick_start_table_is_the_main_commands_run():
    (main_run,) = [r[0].strip("`") for r in results_rows() if "the main command" in r[1]]
    for name in ("README", "getting-started"):
        quick = page(name)
        shown = quick[quick.index("| source/size"):quick.index("\n\nrun dev-6k-search-<hash>")]
        # the committed run's table as `factres run` prints it now (with its mode column)
        assert shown + "\n" == score_table(meta(main_run), metrics_rows(main_run)), name
        assert ("run dev-6k-search-<hash> written to factres-results/dev-6k-search-<hash>/"
                in quick)


def test_the_dagger_sentence_names_exactly_the_dirty_committed_runs():
    text = " ".join(page("tables").split())
    sentence = text[text.index("A commit marked †"):text.index("‡ marks")]
    named = set(re.findall(r"`([\w.-]+)`", sentence)) - {"--allow-dirty"}
    dirty = {p.name for p in RESULTS.iterdir()
             if (p / "meta.json").is_file() and meta(p.name)["git"].get("dirty")}
    assert named == dirty
    assert all(meta(run)["git"]["commit"].startswith("bcc2ad7") for run in dirty)


def test_the_tables_example_is_what_factres_tables_writes(tmp_path):
    text = page("tables")
    import shlex
    command = shlex.split(text[text.index("$ factres tables"):text.index("$ cat")])
    runs = [w for w in command[3:] if not w.startswith("-")
            and (RESULTS / w / "metrics.json").is_file()]
    labels = [command[i + 1] for i, w in enumerate(command) if w == "--label"]
    make_tables(tuple(runs), results=RESULTS, out=tmp_path, formats=("md",),
                names=("mab-fc",), labels=labels)
    shown = text[text.index("<!-- mab-fc"):]
    shown = shown[:shown.index("```")]
    written = (tmp_path / "mab-fc.md").read_text("utf-8")
    assert shown == written.replace(str(RESULTS) + "/", "")


def test_the_dev_misses_sentence_matches_the_oracle_report():
    report = orjson.loads((RESULTS / "oracle-misses-dev-6k-plain-typed" / "misses.json")
                          .read_bytes())
    buckets = report["summary"]["factconsolidation_mh_6k"]["buckets"]
    text = " ".join(page("results").split())
    assert "Its 11 dev misses" in text and report["summary"]["factconsolidation_mh_6k"][
        "misses"] == 11
    assert (buckets["needs_older_version"], buckets["plan_error:no_plan"],
            buckets["plan_error:hop_short"], buckets["plan_error:other"]) == (4, 5, 1, 1)
    assert "1 completes a plan one hop short and 1 a plan two hops short" in text
    (other,) = [m for m in report["misses"] if m["bucket"] == "plan_error:other"]
    plan, gold = re.match(r"plan (.*) : \w+; gold chain (.*)", other["detail"]).groups()
    assert len(gold.split(" -> ")) - len(plan.split(" -> ")) == 2


def test_the_test_command_is_the_one_ci_runs():
    command = "pip install -e '.[test,parquet,plot,serve,hf,docs]' && python -m pytest -q"
    assert f"```\n{command}\n```" in section("Quick start")
    assert f"```console\n{command}\n```" in page("getting-started")
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "-m pip install --quiet -e '.[test,parquet,plot,serve,hf,docs]'" in ci
    assert f"# The README's test command: {command}" in ci
    assert '"$venv/bin/python" -m pytest -q' in ci
    assert "pip install --quiet \"$root\"" in ci          # the non-editable install it checks


def test_the_parse_benchmark_repeat_count():
    source = (ROOT / "benchmarks" / "parse.py").read_text("utf-8")
    repeat = re.search(r'"--repeat", type=int, default=(\d+)', source)[1]
    assert f"min of {repeat} runs" in " ".join(section("Parsing", "performance").split())


@pytest.mark.parametrize("run", ["dev-6k-plain"])
def test_dev_6k_plain_reproduces_from_the_archived_sets(run, tmp_path, monkeypatch):
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    text = " ".join(page("results").split())
    assert ("`factres run --plans rules-6k --plans lexicon-6k --mode plain` reproduces its "
            "predictions and metrics") in text
    again = execute(RunConfig(plans=("rules-6k", "lexicon-6k"), mode="plain"), results=tmp_path,
                    run_id="again")
    renamed = {"rules-6k": "live:rules", "lexicon-6k": "live:lexicon"}
    for row in again.predictions:
        row["plan_set"] = renamed.get(row["plan_set"], row["plan_set"])
        del row["confidence"]            # the label came later (issue 20) than the run
    assert again.predictions == loads_lines((RESULTS / run / "predictions.jsonl").read_bytes())
    assert again.metrics["rows"] == list(metrics(run).values())
    assert [[s["set_id"], s["plans_sha256"]] for s in again.meta["plan_sets"]] == [
        [name, s["plans_sha256"]] for name, s in zip(renamed, meta(run)["plan_sets"])]


def test_the_blind_set_table_matches_its_committed_runs():
    text = section("The blind paraphrase set", "results")
    table = text[text.index("| run | 64K (90) |"):]
    table = table[:table.index("\n\n")]
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == 4
    for run, k64, k262, pooled in rows:
        got = metrics(run.split("`")[1])
        assert (k64, k262) == (figure(got["blind_mh_64k"]["em"]),
                               figure(got["blind_mh_262k"]["em"])), run
        assert pooled == cell(got["pooled mh"]), run


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_readme_resolve_example_runs(capsys):
    (code, _memory) = _python_blocks(README)
    exec(compile(code, "README.md (resolve)", "exec"), {})
    first, path = capsys.readouterr().out.splitlines()
    # the first dev question, as the committed main run answers it
    row = loads_lines((RESULTS / "dev-6k-search-confidence" / "predictions.jsonl")
                      .read_bytes())[0]
    assert first == f"{row['question']} -> {row['prediction']} {row['confidence']['label']}"
    assert path.endswith(f":{row['prediction']}") and " > " in path


def test_the_readme_memory_example_prints_what_it_says(capsys):
    (_resolve, code) = _python_blocks(README)
    assert len(code.strip().splitlines()) <= 6
    exec(compile(code, "README.md (memory)", "exec"), {})
    shown = re.search(r"prints `([^`]*)`", README[README.index("**Use it as a memory**"):])[1]
    assert capsys.readouterr().out == shown + "\n"


def test_the_calibration_table_matches_the_committed_dev_run():
    from oracle.calibration import analyse
    text = section("Calibration", "oracle")
    row = next(line for line in text.splitlines()
               if line.startswith("| `dev-6k-search-confidence` (200) |"))
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    labels = analyse(["dev-6k-search-confidence"], RESULTS).payload["runs"][0]["labels"]
    for cell, got in zip(cells, labels):
        assert cell == (f"{got['right']}/{got['questions']} = {got['precision']:.2f} "
                        f"[{got['coverage']:.2f}]"), got["label"]


def test_the_readme_headline_figures_are_the_committed_runs():
    head = " ".join(README[:README.index("## Quick start")].split())
    search, plain = metrics("dev-6k-search-confidence"), metrics("dev-6k-plain-confidence")
    assert f"**{figure(search['pooled sh']['em'])}** EM on single-hop" in head
    assert f"**{cell(search['pooled mh'])}** on multi-hop (`dev-6k-search-confidence`" in head
    assert f"latest version at every hop: {figure(plain['pooled mh']['em'])})" in head
    ceiling = orjson.loads((RESULTS / "oracle-ceiling-6k-2" / "ceiling.json").read_bytes())
    optimum = ceiling["per_source"]["factconsolidation_mh_6k"]["optimal"]
    assert f"store could do is {optimum}" in head
    blind = metrics("blind-mh-search-reading")
    assert f"**{cell(blind['pooled mh'])}** (`blind-mh-search-reading`)" in head
    # abstaining below medium: what the committed calibration of the blind confidence set says
    calibration = orjson.loads((RESULTS / "oracle-calibration-blind-conf" / "calibration.json")
                               .read_bytes())
    runs = {r["run"]: {x["label"]: x for x in r["labels"]} for r in calibration["runs"]}
    unanswerable, answerable = runs["blind-conf-unanswerable"], runs["blind-conf-search"]
    left = unanswerable["none"]["questions"] + unanswerable["low"]["questions"]
    kept = answerable["high"]["right"] + answerable["medium"]["right"]
    right = sum(x["right"] for x in answerable.values())
    total = sum(x["questions"] for x in answerable.values())
    assert f"leaves **{left}** of them unanswered" in head
    assert f"keeps **{kept}** of the {right} right answers to its {total} answerable" in head


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 200


def test_the_blind_set_is_described_as_its_runs_and_readme_say():
    text = " ".join(section("The blind paraphrase set", "results").split())
    first = meta("blind-mh-search-first")["git"]
    assert first["dirty"] is False and f"clean tree at {first['commit'][:7]}" in text
    own = " ".join((ROOT / "tests" / "data" / "blind_mh" / "README.md").read_text().split())
    author = "by a helper session (an AI assistant started by a project session for this one task)"
    assert author in own and author in text
    report = orjson.loads((RESULTS / "oracle-misses-blind-mh-search-reading" / "misses.json")
                          .read_bytes())
    buckets = {b: n for s in report["summary"].values() for b, n in s["buckets"].items() if n}
    assert buckets == {"no_gold_path": 2, "needs_older_version": 1, "plan_error:hop_short": 1}
    assert ("two have no gold path (`no_gold_path`), one needs an older version "
            "(`needs_older_version`) and one plan stops a hop short (`plan_error:hop_short`)") \
        in text


def test_the_explain_example_is_the_selection_error_of_the_current_run(tmp_path):
    from oracle.misses import analyse
    text = " ".join(page("explaining").split())
    assert "factres explain dev-6k-search-confidence factconsolidation_mh_6k_no82" in text
    summary = analyse(RESULTS / "dev-6k-search-confidence").payload
    rows = {m["qid"]: m["bucket"] for m in summary["misses"]}
    assert rows["factconsolidation_mh_6k_no82"] == "selection_error"
    assert sorted(rows.values()).count("needs_older_version") == 4 and len(rows) == 6
    assert "plan_error:hop_short" in rows.values()
