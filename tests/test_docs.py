"""The docs cannot rot (issue 24): every fenced Python block of the README and of docs/ runs
(but a block that opens with `# Not run by the docs tests:` and says why, such as one that needs a
chat model this machine has not: that one is compiled only), every console example whose output is shown prints exactly that (a trailing `...` line: what is
shown is the start), the map of the old README covers every one of its headings and names only
pages that exist, and the route to test-split numbers the docs give works."""
from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracle.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
BEFORE = ROOT / "tests" / "data" / "readme-before.md"
LINKED = ("resolver", "oracle", "tests", "grammars", "benchmarks", "pyproject.toml")


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", path.read_text("utf-8"), re.S | re.M)


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """A scratch folder laid out as a clone, the working folder: what a reader runs from."""
    work = tmp_path / "clone"
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(ROOT / name)
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    monkeypatch.chdir(work)
    return work


# ---- Python blocks --------------------------------------------------------------------------
NOT_RUN = "# Not run by the docs tests:"
PYTHON = [(p, i) for p in [ROOT / "README.md", *PAGES] for i, _ in enumerate(blocks(p, "python"))]


def test_there_are_python_examples_to_run():
    assert {p.name for p, _ in PYTHON} >= {"README.md", "resolving.md", "memory.md",
                                           "parsing.md", "reproducibility.md", "readout.md"}


@pytest.mark.parametrize("path,index", PYTHON, ids=[f"{p.name}#{i}" for p, i in PYTHON])
def test_each_python_block_runs(path, index, clone):
    namespace: dict = {}
    for i, code in enumerate(blocks(path, "python")[:index + 1]):   # earlier blocks first
        compiled = compile(code, f"{path.name} (python block {i})", "exec")
        if code.startswith(NOT_RUN):
            # it must say why, and still be Python; the blocks after it must not need it
            assert len(code.splitlines()[0]) > len(NOT_RUN) + 10, code.splitlines()[0]
            continue
        exec(compiled, namespace)


def test_the_blocks_not_run_are_few_and_marked():
    marked = [(p.name, i) for p, i in PYTHON if blocks(p, "python")[i].startswith(NOT_RUN)]
    assert marked == [("readout.md", 1)]


# ---- console blocks with their output ---------------------------------------------------------
def console_examples(path: Path) -> list[tuple[list[str], str]]:
    """(the commands of a console block whose lines start with `$ `, the output shown after
    the last of them) for every such block."""
    out = []
    for block in blocks(path, "console"):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("$ "):
            continue
        commands = [line[2:] for line in lines if line.startswith("$ ")]
        last = max(i for i, line in enumerate(lines) if line.startswith("$ "))
        out.append((commands, "\n".join(lines[last + 1:]).strip("\n") + "\n"))
    return out


CONSOLE = [(p, i) for p in PAGES for i, _ in enumerate(console_examples(p))]


def test_there_are_console_examples_to_check():
    assert {p.name for p, _ in CONSOLE} >= {"parsing.md", "concepts.md", "comparing.md",
                                           "tables.md"}


def _run(command: str) -> str:
    words = shlex.split(command)
    if words[0] == "cat":
        return Path(words[1]).read_text("utf-8")
    assert words[0] == "factres", command
    result = CliRunner().invoke(main, words[1:], catch_exceptions=False)
    assert result.exit_code == 0, (command, result.output)
    return result.stdout


@pytest.mark.parametrize("path,index", CONSOLE, ids=[f"{p.name}#{i}" for p, i in CONSOLE])
def test_each_console_example_prints_what_it_shows(path, index, clone):
    commands, shown = console_examples(path)[index]
    for command in commands[:-1]:          # their output is not shown
        _run(command)
    printed = _run(commands[-1])
    if shown.endswith("...\n"):
        assert printed.startswith(shown[:-len("...\n")])
    else:
        assert printed == shown


# ---- the map of the old README ------------------------------------------------------------------
def _map_rows() -> list[list[str]]:
    text = (DOCS / "readme-map.md").read_text("utf-8")
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("| `")]


def test_every_heading_of_the_old_readme_is_mapped():
    headings = [line.lstrip("#").strip() for line in BEFORE.read_text("utf-8").splitlines()
                if re.match(r"#{1,2} ", line)]
    mapped = " ".join(row[0] for row in _map_rows()).replace("`", "")
    assert len(headings) == 19
    missing = [h for h in headings if h.replace("`", "") not in mapped]
    assert missing == []


def test_every_page_the_map_names_exists():
    named = {target.split("#")[0] for row in _map_rows() for cell in row[1:]
             for target in re.findall(r"\]\(([^)]+)\)", cell)}
    assert named and sorted(n for n in named if not (DOCS / n).is_file()) == []


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert sorted(p.name for p in PAGES if f": {p.name}" not in nav) == []


# ---- the route to test-split numbers ---------------------------------------------------------
def test_a_blind_run_scored_afterwards_gives_the_dev_runs_scores(tmp_path, monkeypatch):
    """Getting started's route: a --split test run writes predictions without reading gold;
    `factres score` on its predictions.jsonl, with the rows, scores them as a dev run would."""
    data = ROOT / "tests" / "data" / "runs_small.json"
    results = tmp_path / "results"
    runner = CliRunner()
    blind = runner.invoke(main, ["run", "--split", "test", "--allow-dirty", "--data", str(data),
                                 "--results-dir", str(results), "--run-id", "blind"],
                          catch_exceptions=False)
    assert blind.exit_code == 0, blind.output
    assert '"gold":null' in (results / "blind" / "predictions.jsonl").read_text()
    scored = runner.invoke(main, ["score", str(results / "blind" / "predictions.jsonl"),
                                  "--data", str(data), "--name", "factres-blind",
                                  "--results-dir", str(results), "--run-id", "scored"],
                           catch_exceptions=False)
    assert scored.exit_code == 0, scored.output
    dev = runner.invoke(main, ["run", "--data", str(data), "--results-dir", str(results),
                               "--run-id", "dev"], catch_exceptions=False)
    assert dev.exit_code == 0
    import orjson
    ems = {run: [(r["label"], r["em"]) for r in orjson.loads(
        (results / run / "metrics.json").read_bytes())["rows"]] for run in ("scored", "dev")}
    assert ems["scored"] == ems["dev"]
    shutil.rmtree(results)


# ---- the README's one-line examples ------------------------------------------------------------
README_COMMANDS = [line.strip() for line in (ROOT / "README.md").read_text("utf-8").splitlines()
                   if line.startswith("    factres ")]
SERVES = "factres serve"          # serves until stopped: tests/test_serve.py covers the server


def test_the_readme_has_one_example_per_job():
    jobs = {c.split()[1] for c in README_COMMANDS}
    assert jobs == {"run", "explain", "score", "compare", "oracle", "tables", "serve", "export",
                    "runs"}


@pytest.mark.parametrize("command", [c for c in README_COMMANDS if not c.startswith(SERVES)])
def test_each_readme_example_runs_as_written(command, clone):
    import glob
    args = []
    for word in shlex.split(command)[1:]:      # the shell would expand a glob
        args += sorted(glob.glob(word)) if "*" in word else [word]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, (command, result.output)
    assert not (clone / "results").exists()    # everything went to ./factres-results
