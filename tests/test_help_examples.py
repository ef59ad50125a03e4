"""Every command's `-h` ends with an example that runs as written from a fresh clone (issue 24):
each is run here from a scratch folder laid out as a clone (the repository's folders linked in,
so the example's relative paths resolve), with its own results folder (./factres-results, the
default), a private parse cache and a private copy of the plan archive. Only the examples that
need a model or a long-running server are left out, and their help says so. The examples of
`factres memory`'s commands read the memory file its ingest example makes, which is run first."""
from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from oracle.cli import main

ROOT = Path(__file__).resolve().parent.parent
# command -> what its example needs that a test cannot have; the help must say it
NEEDS = {"plans compile": "running Ollama server", "serve": "serves until stopped"}
# the parts of a clone the examples read (never results/: nothing may be written there)
LINKED = ("resolver", "oracle", "tests", "grammars", "benchmarks", "pyproject.toml")


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        path = prefix + (name,)
        yield " ".join(path), command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


COMMANDS = dict(_commands(main))


def example(command: click.Command) -> str:
    """The example the help ends with, as written in the docstring (wrapped lines joined)."""
    text = command.help or ""
    assert "Example: factres " in text
    tail = text.rsplit("Example: ", 1)[1]
    return " ".join(tail.split())


def test_every_command_ends_its_help_with_an_example():
    for name, command in COMMANDS.items():
        text = (command.help or "").rstrip()
        last = text.split("\n\n")[-1].strip()
        assert last.startswith("Example: factres "), name


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_the_examples_left_out_say_what_they_need(name):
    assert NEEDS[name] in " ".join(COMMANDS[name].help.split())


def test_the_serve_example_names_a_config_that_keeps_the_whole_context():
    """Verification U42: the example served `gpt-4o-mini`, a 128K config the guide says cuts
    the 262K context; the guide's rule line links the section on named memories."""
    guide = (ROOT / "docs" / "server.md").read_text("utf-8")
    models = example(COMMANDS["serve"]).split("--models ")[1].split()[0]
    cut = re.search(r"`gpt-4o-mini` and `gpt-4o`\s+have 128K", guide)
    assert cut and models not in ("gpt-4o-mini", "gpt-4o")
    assert f"`{models}` (1M tokens)" in guide
    assert "[Named memories](#named-memories)" in guide and "\n## Named memories\n" in guide
    assert 'issue "A memory that lasts"' not in guide


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """A scratch folder laid out as a clone, made the working folder."""
    work = tmp_path / "clone"
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(ROOT / name)
    plans = tmp_path / "plans"
    shutil.copytree(ROOT / "plans", plans)
    monkeypatch.setenv("FACTRES_PLANS", str(plans))
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - set(NEEDS)))
def test_the_example_runs_as_written(name, clone):
    if name.startswith("memory ") and name != "memory ingest":
        made = CliRunner().invoke(main, shlex.split(example(COMMANDS["memory ingest"]))[1:])
        assert made.exit_code == 0, made.output
    words = shlex.split(example(COMMANDS[name]))
    assert words[0] == "factres" and " ".join(words[1:]).startswith(name)
    args = []
    for word in words[1:]:             # the shell would expand a glob
        args += sorted(glob.glob(word)) if "*" in word else [word]
    before = sorted(p.name for p in (ROOT / "results").iterdir())
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, (name, result.output)
    # nothing written into the checkout's committed results
    assert sorted(p.name for p in (ROOT / "results").iterdir()) == before
