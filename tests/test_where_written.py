"""Where factres writes, said once and true (issue 34, item 6): run and analysis folders under
the results folder (./factres-results by default), plan sets in the plan archive (the
checkout's plans/, or $FACTRES_PLANS), the caches under the user's cache folder, other files
only where an explicit path says. Every writing command runs in a clone of the repository,
as the README's examples run them, and no file appears or changes anywhere else: not in the
clone's tracked files, not in the checkout factres runs from."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from test_oracle_paths import write_tiny

from oracle.cli import main

ROOT = Path(__file__).resolve().parents[1]
HARNESS = sorted(str(p.relative_to(ROOT)) for p in
                 (ROOT / "tests" / "data" / "mab-outputs").glob("factconsolidation_*_results.json"))

# Every command, by where it writes: the command lines this test runs ({data}: a small row
# file, {explicit}: a folder the command is told to write into, {run}: the run made first).
WRITING = {
    "run": [["run", "--data", "{data}"], ["run", "--data", "{data}", "--mode", "plain"]],
    "score": [["score", *HARNESS, "--name", "my-system"], ["score", *HARNESS]],
    "tables": [["tables", "--plot"], ["tables", "{run}", "my-system", "--table", "mab-fc"]],
    "compare": [["compare", "dev-6k-plain-confidence", "dev-6k-search-confidence", "--out",
                 "{explicit}/compare"]],
    "export": [["export", "dev-6k-search-confidence"]],
    "freeze": [["freeze", "{explicit}/test-v1.json"]],
    "oracle paths": [["oracle", "paths", "--data", "{data}"]],
    "oracle versions": [["oracle", "versions", "--data", "{data}"]],
    "oracle ceiling": [["oracle", "ceiling", "--data", "{data}"], ["oracle", "ceiling"]],
    "oracle signals": [["oracle", "signals", "--data", "{data}"]],
    "oracle misses": [["oracle", "misses", "{run}"]],
    "oracle nbest": [["oracle", "nbest", "{run}"]],
    "oracle calibration": [["oracle", "calibration", "{run}"]],
    "plans compile": [["plans", "compile", "--planner", "lexicon", "--set-id", "mine",
                       "--data", "{data}"]],
    "plans derive": [["plans", "derive", "lexicon-6k", "--order", "all", "--set-id",
                      "mine-orders"]],
    "memory ingest": [["memory", "ingest", "{explicit}/memory.db", "{data}",
                       "--harness-chunks"]],
    "memory forget": [["memory", "forget", "{explicit}/memory.db", "Alpha"]],
    "memory backup": [["memory", "backup", "{explicit}/memory.db", "{explicit}/copy.db"]],
    "memory apply": [["memory", "apply", "{explicit}/memory.db", "tests/data/patches.jsonl"]],
}
# Commands that write nothing (they print, or serve until stopped).
READING = {"explain", "frontier", "history", "parse", "prune", "readout", "runs", "serve",
           "table", "plans list", "plans show", "plans verify", "memory ask", "memory history",
           "memory frontier", "memory log", "memory info", "memory readout"}


def _commands() -> set[str]:
    names = set()
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        if isinstance(command, click.Group):
            names |= {f"{name} {sub}" for sub in command.list_commands(ctx)}
        else:
            names.add(name)
    return names


def test_every_command_is_classed_by_where_it_writes():
    assert set(WRITING) | READING == _commands()
    assert not set(WRITING) & READING


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime) of every file under `folder`, .git left out."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            stat = path.lstat()
            out[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns)
    return out


def _status(folder: Path) -> str:
    return subprocess.run(["git", "-C", str(folder), "status", "--porcelain",
                           "--untracked-files=all"], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def clone(tmp_path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    folder = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--local", str(ROOT), str(folder)], check=True)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path / "home" / ".cache" / "factres"))
    # the plan archive of the clone (the checkout factres runs from has its own plans/)
    monkeypatch.setenv("FACTRES_PLANS", str(folder / "plans"))
    return folder


def test_every_writing_command_writes_only_where_it_says(clone, tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "data").mkdir()
    data = write_tiny(tmp_path / "data")
    explicit = tmp_path / "explicit"
    checkout_before = _status(ROOT)
    outside_before = {p: s for p, s in _files(tmp_path).items()
                      if not p.startswith(("clone/", "home/", "explicit/"))}
    runner = CliRunner()
    first_run = None
    for command, lines in WRITING.items():
        for line in lines:
            args = [a.format(data=data, explicit=explicit, run=first_run or "?") for a in line]
            result = runner.invoke(main, args, catch_exceptions=False)
            assert result.exit_code == 0, (command, result.output)
            if command == "run" and first_run is None:
                first_run = result.stdout.split("\nrun ")[1].split()[0]
    results = clone / "factres-results"
    # the clone: nothing but the results folder and the plan archive's new sets; no tracked
    # file changed
    changed = [line for line in _status(clone).splitlines()
               if not line[3:].startswith(("factres-results/", "plans/mine"))]
    assert changed == []
    # new plan sets, in the archive: only the two the plans commands made
    assert sorted(p.name for p in (clone / "plans").iterdir() if p.name.startswith("mine")) == \
        ["mine", "mine-orders"]
    # run and analysis folders under the results folder, with names of their own
    names = sorted(p.name for p in results.iterdir())
    assert first_run.startswith("dev-6k-search-") and first_run in names
    assert any(n.startswith("dev-6k-plain-") for n in names)
    assert {"my-system", "tables", "dev-6k-search-confidence-mab"} <= set(names)
    # (tables/ is the tables' own folder in either place, never looked up by name)
    committed = {p.name for p in (ROOT / "results").iterdir()} - {"tables"}
    assert not committed & set(names), "a new folder took a committed folder's name"
    assert "oracle-ceiling-6k-3" in names
    # the explicit paths, and nothing else outside the clone, the caches and the data
    assert sorted(p.name for p in explicit.iterdir()) == [
        "compare", "copy.db", "memory.db", "memory.db-lock", "test-v1.json"]
    outside_after = {p: s for p, s in _files(tmp_path).items()
                     if not p.startswith(("clone/", "home/", "explicit/"))}
    assert outside_after == outside_before
    # the checkout factres runs from (its committed results/ read, never written)
    assert _status(ROOT) == checkout_before
