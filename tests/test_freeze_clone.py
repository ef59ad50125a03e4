"""The frozen configuration pins every file of the packages: in a temporary git clone, a test run
after a committed one-line change to a package file is refused, naming that file; a later
commit that changes no package file runs, and says so."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parent.parent


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=factres test", "-c",
                           "user.email=test@example.invalid", *args], check=True,
                          capture_output=True, text=True).stdout


def factres(clone: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    # the clone's own code: its folder first on the path, ahead of the installed package
    env = {**os.environ, "PYTHONPATH": str(clone), "FACTRES_CACHE": str(tmp / "cache"),
           "FACTRES_RESULTS": str(tmp / "results")}
    env.pop("FACTRES_PLANS", None)
    return subprocess.run([sys.executable, "-c", "from oracle.cli import main; main()", *args],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"],
                      capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    tmp = tmp_path_factory.mktemp("freeze-clone")
    target = tmp / "clone"
    git(REPO, "clone", "--quiet", "--shared", str(REPO), str(target))
    return tmp, target


def test_a_committed_change_to_a_package_file_is_refused_naming_it(clone):
    tmp, repo = clone
    data = str(repo / "tests" / "data" / "runs_small.json")
    frozen = tmp / "frozen.json"
    assert factres(repo, tmp, "freeze", str(frozen)).returncode == 0
    assert orjson.loads(frozen.read_bytes())["commit"] == git(repo, "rev-parse", "HEAD").strip()

    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nA note.\n")
    git(repo, "commit", "-qam", "docs only")
    ok = factres(repo, tmp, "run", "--split", "test", "--config", str(frozen), "--data", data,
                 "--run-id", "docs")
    assert ok.returncode == 0, ok.stderr
    assert "every package file, version, plan set and weight matches" in ok.stderr

    haystack = repo / "resolver" / "haystack.py"
    lines = haystack.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("_SOURCE = "))
    lines[at] = lines[at].rstrip("\n") + "  # one line changed\n"
    haystack.write_text("".join(lines))
    git(repo, "commit", "-qam", "a one-line change to a package file")
    refused = factres(repo, tmp, "run", "--split", "test", "--config", str(frozen),
                      "--data", data)
    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert lines[0] == f"Error: this checkout differs from the frozen configuration {frozen}:"
    named = [line.split(":")[0] for line in lines[1:-1]]
    # the file, and the live plan sets whose compiler code it is part of
    assert named[0] == "  - file resolver/haystack.py changed"
    assert named[1:] == ["  - plan set live"] * 2, named     # live:rules, live:lexicon
    # the refused run left no folder: only the docs-only run is there
    assert sorted(p.name for p in (tmp / "results").iterdir()) == ["docs"]


def test_a_dirty_tree_refusal_names_the_changed_files(clone):
    """An uncommitted change to a tracked file refuses a test run, naming that file."""
    tmp, repo = clone
    data = str(repo / "tests" / "data" / "runs_small.json")
    frozen = tmp / "frozen-dirty.json"
    assert factres(repo, tmp, "freeze", str(frozen)).returncode == 0
    table = repo / "results" / "tables" / "mab-fc.md"
    original = table.read_bytes()
    table.write_bytes(original + b"\nedited\n")
    (repo / "untracked.txt").write_text("new files do not count\n")
    try:
        refused = factres(repo, tmp, "run", "--split", "test", "--config", str(frozen),
                          "--data", data)
    finally:
        table.write_bytes(original)
        (repo / "untracked.txt").unlink()
    assert refused.returncode == 1
    assert refused.stderr == ("Error: a test run needs a clean tree: the working tree has "
                              "uncommitted changes to 1 tracked file: results/tables/mab-fc.md; "
                              "commit first, or pass --allow-dirty to run marked as dirty\n")


def test_a_parser_change_never_reads_the_old_parsers_cache(clone):
    """The parse cache holds the parser's output: a committed change to the code that builds
    facts must parse afresh, not read what the old code cached."""
    tmp, repo = clone
    data = str(repo / "resolver" / "data" / "fc" / "factconsolidation_6k.json")
    before = factres(repo, tmp, "parse", data, "--json")          # warms the shared cache
    assert before.returncode == 0, before.stderr
    facts = repo / "resolver" / "text" / "facts.py"
    text = facts.read_text()
    old = "obj = obj.value.rstrip(_LINE_END)[:-1]\n"
    assert old in text
    facts.write_text(text.replace(old, 'obj = obj.value.rstrip(_LINE_END)[:-1] + "X"\n'))
    git(repo, "commit", "-qam", "a parser change")
    after = factres(repo, tmp, "frontier", "--data", data)
    assert after.returncode == 0, after.stderr
    values = [line.split("\t")[2] for line in after.stdout.splitlines()[1:] if "\t" in line]
    assert values and all(v.endswith("X") for v in values)
