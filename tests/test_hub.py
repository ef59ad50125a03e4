"""`--data hf:ai-hyz/MemoryAgentBench` (issue 34, item 7): the FactConsolidation rows of the
dataset's Conflict_Resolution split through the `datasets` library, then the dev/test protocol
as a file's rows. The hub is unreachable here: the loader reads a small dataset saved locally
in the hub's layout (data/Conflict_Resolution-00000-of-00001.parquet), with the real library
where it is installed (the `hf` extra) and, everywhere, with the library's import replaced by
a stand-in that reads the same files, so the loader's own logic is tested either way."""
from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import resolver.hub as hub
from oracle.cli import main
from resolver.errors import InputError, MissingExtraError
from resolver.haystack import bundled_path, load

DATA = Path(__file__).parent / "data"
COMMITTED = Path(__file__).resolve().parents[1] / "results" / "dev-6k-search-confidence"


def write_local_dataset(folder: Path) -> Path:
    """A copy of the dataset's layout: the 6K rows (dev), a 32K row of questions relabelled as
    FactConsolidation's (test) and a row of another benchmark's source, which is left out."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    rows = json.loads(bundled_path().read_text("utf-8"))["data"]
    held = json.loads((DATA / "heldout_32k" / "heldout_32k.json").read_text("utf-8"))
    n = len(held["questions"])
    rows.append({"context": held["context"], "questions": held["questions"],
                 "answers": held["answers"],
                 "metadata": dict(rows[0]["metadata"], source="factconsolidation_mh_32k",
                                  qa_pair_ids=[f"factconsolidation_mh_32k_no{i}"
                                               for i in range(n)])})
    rows.append({"context": "Some other benchmark's text.", "questions": ["Q?"],
                 "answers": [["A"]], "metadata": dict(rows[0]["metadata"], source="ruler_qa1",
                                                      qa_pair_ids=["ruler_qa1_no0"])})
    data = folder / "MemoryAgentBench" / "data"
    data.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), data / "Conflict_Resolution-00000-of-00001.parquet")
    return folder / "MemoryAgentBench"


class StandIn:
    """The part of `datasets` the loader uses, reading the hub's layout from a local folder."""

    @staticmethod
    def load_dataset(name, split, cache_dir):
        import pyarrow.parquet as pq
        files = sorted((Path(name) / "data").glob(f"{split}-*.parquet"))
        if not files:
            raise FileNotFoundError(f"Couldn't find a dataset script or data at {name}")
        return [row for f in files for row in pq.read_table(f).to_pylist()]


@pytest.fixture(params=["stand-in", "datasets"])
def library(request, monkeypatch, tmp_path):
    monkeypatch.setenv("FACTRES_HF_CACHE", str(tmp_path / "hf-cache"))
    if request.param == "stand-in":
        monkeypatch.setattr(hub, "datasets_library", lambda: StandIn)
    else:
        pytest.importorskip("datasets")
        monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")     # a local folder needs no hub
    return request.param


def test_the_factconsolidation_rows_load_and_the_others_are_left_out(tmp_path, library):
    local = write_local_dataset(tmp_path)
    dataset, gold = load([f"hf:{local}"], use_cache=False)
    assert dataset.sources == ["factconsolidation_mh_6k", "factconsolidation_sh_6k",
                               "factconsolidation_mh_32k"] or sorted(dataset.sources) == sorted(
        ["factconsolidation_mh_6k", "factconsolidation_sh_6k", "factconsolidation_mh_32k"])
    assert "ruler_qa1_no0" not in gold
    assert len(dataset.questions) == 200 + len(json.loads(
        (DATA / "heldout_32k" / "heldout_32k.json").read_text("utf-8"))["questions"])
    assert dataset.paths == (f"hf:{local}",)
    assert any("FactConsolidation rows of 4 in split Conflict_Resolution" in n
               for n in dataset.notes)


def test_the_rows_go_through_the_dev_protocol_as_a_files_do(tmp_path, library):
    """The 6K rows from the dataset give the committed run's predictions."""
    local = write_local_dataset(tmp_path)
    results = tmp_path / "results"
    run = CliRunner().invoke(main, ["run", "--data", f"hf:{local}", "--results-dir",
                                    str(results), "--run-id", "via-hub"],
                             catch_exceptions=False)
    # the 32K row is of the test split: the dev run says so, and scores it (its gold is here)
    assert run.exit_code == 0, run.output
    assert "factconsolidation_mh_32k is a source of the test split" in run.stderr
    mine = {r["qid"]: r["prediction"] for r in map(orjson.loads, (
        results / "via-hub" / "predictions.jsonl").read_bytes().splitlines())}
    committed = {r["qid"]: r["prediction"] for r in map(orjson.loads, (
        COMMITTED / "predictions.jsonl").read_bytes().splitlines())}
    assert {q: mine[q] for q in committed} == committed
    meta = orjson.loads((results / "via-hub" / "meta.json").read_bytes())
    assert meta["data"] == [f"hf:{local}"] and list(meta["data_sha256"]) == [f"hf:{local}"]


def test_a_test_run_never_reads_the_rows_answers(tmp_path, library):
    local = write_local_dataset(tmp_path)
    result = CliRunner().invoke(main, ["run", "--data", f"hf:{local}", "--split", "test",
                                       "--allow-dirty", "--results-dir", str(tmp_path / "r"),
                                       "--run-id", "t"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = [orjson.loads(line) for line in
            (tmp_path / "r" / "t" / "predictions.jsonl").read_bytes().splitlines()]
    assert rows and all(r["gold"] is None and r["em"] is None for r in rows)


def test_a_dataset_that_cannot_be_loaded_names_it_and_the_offline_variable(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("FACTRES_HF_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(hub, "datasets_library", lambda: StandIn)
    with pytest.raises(InputError) as err:
        load([f"hf:{tmp_path / 'nowhere'}"])
    text = str(err.value)
    assert text.startswith(f"cannot load the Hugging Face dataset '{tmp_path / 'nowhere'}', "
                           "split Conflict_Resolution (no copy in the cache; "
                           "HF_DATASETS_OFFLINE=1): FileNotFoundError: ")
    assert f"(the copy is kept in {tmp_path / 'hf-cache'}, $FACTRES_HF_CACHE)" in text
    result = CliRunner().invoke(main, ["run", "--data", f"hf:{tmp_path / 'nowhere'}",
                                       "--results-dir", str(tmp_path / "r")])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert result.output.startswith("Error: cannot load the Hugging Face dataset")


def test_without_the_library_the_error_says_which_extra(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_datasets(name, *args, **kwargs):
        if name == "datasets":
            raise ImportError("No module named 'datasets'")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_datasets)
    with pytest.raises(MissingExtraError, match=r"pip install 'factres\[hf\]'"):
        hub.hub_rows("hf:ai-hyz/MemoryAgentBench")


def test_the_missing_rows_errors_point_to_the_route(tmp_path):
    context = tmp_path / "fc_32k.txt"
    context.write_text("Here is a list of facts:\n0. The capital of France is Paris.\n")
    result = CliRunner().invoke(main, ["run", "--data", str(context), "--results-dir",
                                       str(tmp_path / "r")])
    assert result.exit_code == 1
    assert f"--data {hub.ROUTE}" in result.output


def test_the_cache_is_factres_own(monkeypatch, tmp_path):
    monkeypatch.delenv("FACTRES_HF_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert hub.cache_dir() == tmp_path / "factres" / "hf"
    monkeypatch.setenv("FACTRES_HF_CACHE", str(tmp_path / "mine"))
    assert hub.cache_dir() == tmp_path / "mine"
