"""The dev/test protocol: `factres freeze` and the gate `factres run --split test` passes."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from resolver.cli import main
from resolver.errors import ProtocolError
from resolver.run import identity, protocol
from resolver.run.config import RunConfig
from resolver.run.runs import execute
from resolver.search import path_search as search

SMALL = Path(__file__).parent / "data" / "runs_small.json"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def clean(monkeypatch):
    monkeypatch.setattr(identity, "git_state", lambda: {"commit": COMMIT, "dirty": False})


@pytest.fixture
def dirty(monkeypatch):
    monkeypatch.setattr(identity, "git_state", lambda: {"commit": COMMIT, "dirty": True})
    monkeypatch.setattr(identity, "dirty_files", lambda: ["README.md", "results/tables/mab-fc.md"])


@pytest.fixture
def frozen(tmp_path):
    path = tmp_path / "frozen.json"
    result = invoke("freeze", str(path), "--plans", "live:rules", "--plans", "live:lexicon")
    assert result.exit_code == 0
    return path


def test_freeze_records_plans_weights_grammar_and_its_own_hash(frozen):
    doc = orjson.loads(frozen.read_bytes())
    assert doc["schema"] == "factres.frozen/2"
    assert doc["files_sha256"] == identity.package_files()
    assert {"resolver/haystack.py", "resolver/text/cache.py", "resolver/plan/archive.py",
            "resolver/models/prompts/reader.txt", "resolver/grammars/facts.lark",
            "resolver/data/fc/factconsolidation_6k.json", "oracle/paths.py"} <= \
        set(doc["files_sha256"])
    assert doc["versions"] == identity.package_versions() and doc["commit"]
    assert [s["spec"] for s in doc["plan_sets"]] == ["live:rules", "live:lexicon"]
    assert all(s["source"] == "live" and "resolver/plan/compile_rules.py" in s["compiler_sha256"]
               for s in doc["plan_sets"])
    assert doc["search_weights"] == search.weights()
    assert doc["search_weights"]["HOP_COST"] == search.HOP_COST
    assert len(doc["grammar_sha256"]) == 64 and doc["mode"] == "search"
    assert protocol.load_frozen(frozen)["sha256"] == doc["sha256"]


def test_freeze_prints_and_never_overwrites(tmp_path):
    path = tmp_path / "f.json"
    first = invoke("freeze", str(path), "--plans", "rules-6k")
    sha = orjson.loads(path.read_bytes())["sha256"]
    assert first.output == f"froze {path}: plan sets rules-6k; mode search; sha256 {sha}\n"
    assert orjson.loads(path.read_bytes())["plan_sets"][0]["files_sha256"]["plans.jsonl"] == \
        "a17858404b2ded4905926b1b2f1b4ad3316c5e3aae683ab90cee9c0e649f8d18"
    again = invoke("freeze", str(path))
    assert again.exit_code == 1
    assert again.output == (f"Error: {path} exists: a frozen configuration is never "
                            "overwritten; freeze into a new file\n")


def test_an_edited_frozen_file_is_refused(tmp_path, frozen, clean):
    doc = orjson.loads(frozen.read_bytes())
    doc["search_weights"]["HOP_COST"] = 0.1
    frozen.write_bytes(orjson.dumps(doc))
    with pytest.raises(ProtocolError) as err:
        execute(RunConfig(data=(str(SMALL),), split="test", frozen=str(frozen)),
                results=tmp_path / "r")
    assert str(err.value) == (f"{frozen}: content does not match its sha256: the frozen "
                              "configuration was edited after freezing")


def test_a_test_run_needs_a_frozen_configuration(tmp_path, clean):
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--results-dir",
                    str(tmp_path))
    assert result.exit_code == 1
    assert result.output == ("Error: a test run needs a frozen configuration: pass --config "
                             "FILE (write one with factres freeze), or --allow-dirty to run "
                             "unfrozen, marked so in meta.json and in every table row\n")
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []


def test_a_test_run_needs_a_clean_tree(tmp_path, frozen, dirty):
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--config", str(frozen),
                    "--results-dir", str(tmp_path / "r"))
    assert result.exit_code == 1
    assert result.output == ("Error: a test run needs a clean tree: the working tree has "
                             "uncommitted changes to 2 tracked files: README.md, "
                             "results/tables/mab-fc.md; commit first, or pass --allow-dirty to "
                             "run marked as dirty\n")


def test_a_frozen_clean_test_run_records_its_configuration(tmp_path, clean, frozen):
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--config", str(frozen),
                    "--results-dir", str(tmp_path / "r"), "--run-id", "t1")
    # runs_small.json mixes sizes: its 6K sources are noted, not refused
    assert result.exit_code == 0 and result.stderr == (
        "note: factconsolidation_mh_6k, factconsolidation_sh_6k are sources of the dev split "
        "(dev is 6K; test is 32K, 64K and 262K); recorded in meta.json\n")
    meta = orjson.loads((tmp_path / "r" / "t1" / "meta.json").read_bytes())
    sha = orjson.loads(frozen.read_bytes())["sha256"]
    assert meta["protocol"] == {"split": "test", "frozen": True, "frozen_config": str(frozen),
                                "frozen_sha256": sha, "mismatches": [], "allow_dirty": False,
                                "frozen_commit": orjson.loads(frozen.read_bytes())["commit"],
                                "dirty": False, "commit": COMMIT,
                                "off_split_sources": ["factconsolidation_mh_6k",
                                                      "factconsolidation_sh_6k"]}
    assert meta["git"] == {"commit": COMMIT, "dirty": False}
    assert meta["config"]["plans"] == ["live:rules", "live:lexicon"]
    # a later run is a new id beside the old one, never over it
    again = invoke("run", "--data", str(SMALL), "--split", "test", "--config", str(frozen),
                   "--results-dir", str(tmp_path / "r"))
    assert again.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [
        "t1", f"test-6k-32k-search-{meta['config_sha256'][:8]}"]


def test_every_mismatch_is_named(tmp_path, frozen, clean, monkeypatch):
    monkeypatch.setattr(search, "HOP_COST", 0.5)
    monkeypatch.setattr(protocol, "grammar_sha256", lambda: "f" * 64)
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--config", str(frozen),
                    "--results-dir", str(tmp_path / "r"))
    assert result.exit_code == 1
    frozen_grammar = orjson.loads(frozen.read_bytes())["grammar_sha256"]
    assert result.output == (
        f"Error: this checkout differs from the frozen configuration {frozen}:\n"
        f"  - grammar sha256: frozen {frozen_grammar[:12]}..., now ffffffffffff...\n"
        "  - search weight HOP_COST: frozen 0.35, now 0.5\n"
        "freeze a new configuration (a new file) for a new test run, or pass --allow-dirty "
        "to run marked as unfrozen\n")


def test_plans_must_match_the_frozen_ones(tmp_path, frozen, clean):
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--config", str(frozen),
                    "--plans", "live:rules", "--results-dir", str(tmp_path / "r"))
    assert result.exit_code == 1
    assert result.output == (f"Error: --plans live:rules differs from the plan sets of "
                             f"{frozen}: live:rules live:lexicon (omit --plans to use them)\n")


def test_allow_dirty_runs_and_marks(tmp_path, dirty, monkeypatch, frozen):
    monkeypatch.setattr(search, "HOP_COST", 0.5)
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--config", str(frozen),
                    "--allow-dirty", "--results-dir", str(tmp_path / "r"), "--run-id", "t")
    assert result.exit_code == 0
    assert result.stderr == ("note: factconsolidation_mh_6k, factconsolidation_sh_6k are sources of the dev split "
        "(dev is 6K; test is 32K, 64K and 262K); recorded in meta.json\n"
                             "warning: run admitted with --allow-dirty (dirty tree: yes, "
                             "frozen configuration: no); marked so in meta.json and in every "
                             "table row built from it\n")
    record = orjson.loads((tmp_path / "r" / "t" / "meta.json").read_bytes())["protocol"]
    assert (record["frozen"], record["allow_dirty"], record["dirty"]) == (False, True, True)
    assert record["mismatches"] == ["search weight HOP_COST: frozen 0.35, now 0.5"]
    tables = invoke("tables", "t", "--results-dir", str(tmp_path / "r"), "--out",
                    str(tmp_path / "tables"), "--table", "mab-fc", "--format", "md",
                    "--columns", "commit")
    assert tables.exit_code == 0
    row = (tmp_path / "tables" / "mab-fc.md").read_text().splitlines()[4]
    assert row.startswith("| factres search | 0123456†‡ | unscored | unscored |")


def test_dev_runs_are_not_gated(tmp_path, dirty):
    run = execute(RunConfig(data=(str(SMALL),)), results=tmp_path, run_id="d")
    assert run.meta["protocol"]["split"] == "dev"
    assert run.meta["protocol"]["dirty"] is True and run.meta["protocol"]["frozen"] is False


def test_sources_of_the_other_split_are_recorded_and_noted(tmp_path, dirty):
    # runs_small.json holds 6K rows and one 32K source: a dev run scores a test size.
    result = invoke("run", "--data", str(SMALL), "--results-dir", str(tmp_path),
                    "--run-id", "d", "--no-progress")
    assert result.exit_code == 0
    meta = orjson.loads((tmp_path / "d" / "meta.json").read_bytes())
    assert meta["protocol"]["off_split_sources"] == ["factconsolidation_sh_32k"]
    assert result.stderr.splitlines()[-1] == (
        "note: factconsolidation_sh_32k is a source of the test split (dev is 6K; test is 32K, "
        "64K and 262K); recorded in meta.json")
    assert protocol.off_split_sources("test", ["factconsolidation_mh_6k", "heldout_mh_32k",
                                               "factconsolidation_mh_262k"]) == \
        ["factconsolidation_mh_6k"]
    assert protocol.off_split_sources("dev", ["heldout_mh_32k"]) == []
