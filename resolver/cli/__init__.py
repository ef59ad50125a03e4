"""The `factres` command line: a thin door onto the library.

Each command parses its options, calls one library function and formats the result. Library
errors (`FactresError`) become `click.ClickException` (`options.library_errors`) and nowhere else.

Commands load lazily (click's "Lazily Loading Subcommands"): `COMMANDS` maps each name to the
module that defines it and its one-line help, so `factres --help` imports no command module and
a command imports only its own. No command module imports this group back. The oracle command
group is added in oracle/cli.py (oracle depends on resolver, never the other way round), and
that is where the console script points. This package may import every stage below it."""
from __future__ import annotations

import importlib

import click

from resolver.cli.options import CONTEXT_SETTINGS

# name -> ("module:attribute", the summary `factres --help` shows): the first sentence of the
# command's own docstring, kept here so that listing commands imports none (a test keeps them
# equal to what click reads from the docstrings).
COMMANDS: dict[str, tuple[str, str]] = {
    "compare": ("resolver.cli.compare:compare_command",
                "Compare runs question by question: EM per source and pooled, the paired "
                "difference with its bootstrap interval, the exact McNemar test and the "
                "questions that flipped."),
    "export": ("resolver.cli.export:export_command",
               "Write a run as MemoryAgentBench result files, one per source, as the harness "
               "names and lays them out, so that the tools built for the harness's format read "
               "it."),
    "freeze": ("resolver.cli.run:freeze_command",
             "Write a frozen configuration to CONFIG (never overwritten): the plan sets (archived "
             "sets by the sha256 of their files, live sets by the sha256 of their compiler "
             "sources), the search weights, the sha256 of every file of the installed packages, "
             "the Python and dependency versions, the commit, mode and lanes, and its own "
             "sha256."),
    "frontier": ("resolver.cli.provenance:frontier_command",
               "Print the current value of every key (the active frontier), one per line, "
               "tab-separated: subject, relation, value, status, serial, line."),
    "history": ("resolver.cli.provenance:history_command",
              "Print every version of an entity's keys: serial, line, status, value and the "
              "evidence line, oldest first."),
    "memory": ("resolver.cli.memory:memory_group",
               "Keep a memory in a file: ingest text into it, ask it, read its history, log and "
               "counts."),
    "parse": ("resolver.cli.parse:parse_command",
            "Parse a haystack and report lines, facts, unparsed lines and version statistics."),
    "plans": ("resolver.cli.plans:plans_group",
            "Compile questions into plan sets and keep them in the archive (plans/<set-id>/)."),
    "prune": ("resolver.cli.readout:prune_command",
              "Print a context without its superseded facts: each numbered fact is dropped "
              "when the context holds a fact of the same key (subject, relation) with a higher "
              "serial; text that does not parse is kept as it is (P-Mem's graph-guided "
              "pruning)."),
    "readout": ("resolver.cli.readout:readout_command",
                "Print the readout of a run's questions: the memory's state for each question "
                "as short text for a language model to read, one line per cell, `[#serial] "
                "subject | relation = value`, the winning path's cells first, then the rival "
                "paths' in rank order, cut to the budget (see the docs: A readout for an LLM "
                "reader)."),
    "run": ("resolver.cli.run:run_command",
          "Resolve every question, score it as MemoryAgentBench does, and record the run in "
          "<results>/<run-id>/ (meta.json, predictions.jsonl, traces.jsonl, metrics.json, "
          "table.md, table.tex)."),
    "runs": ("resolver.cli.runs:runs_command",
             "List the runs: every run folder of the results folder, then the repository's "
             "committed ones (marked which), with id, label, mode, plan sets, data, sizes, "
             "pooled EM and date."),
    "score": ("resolver.cli.score:score_command",
              "Score another system's predictions as MemoryAgentBench does and record them as "
              "a run in <results>/<run-id>/ (meta.json, predictions.jsonl, metrics.json, "
              "table.md, table.tex)."),
    "serve": ("resolver.cli.serve:serve_command",
              "Answer OpenAI chat-completions requests with factres, so a harness evaluates it "
              "by pointing its OpenAI client here (OPENAI_BASE_URL=http://HOST:PORT/v1)."),
    "table": ("resolver.cli.run:table_command",
            "Print the score table of a finished run (a run id or a run folder), re-rendered from "
            "its metrics.json."),
    "tables": ("resolver.cli.tables:tables_command",
             "Write the paper tables mab-fc, mab-nbest, mab-ceiling and mab-ref from folders "
             "only."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported when they run (or when their own help is asked)."""

    def __init__(self, *args, lazy: dict[str, tuple[str, str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            target, _ = self.lazy[name]
            module, _, attr = target.partition(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the map's help lines: listing commands loads none of them."""
        names = self.list_commands(ctx)
        # click's own cut: the width left beside the longest command name
        limit = formatter.width - 6 - max((len(n) for n in names), default=0)
        rows = []
        for name in names:
            if name in self.lazy:
                rows.append((name, _short_help(self.lazy[name][1], limit)))
            else:
                cmd = super().get_command(ctx, name)
                if cmd is not None and not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _short_help(summary: str, limit: int) -> str:
    """The summary cut as click cuts a loaded command's help for the command list."""
    return click.Command(None, help=summary).get_short_help_str(limit)


def make_main(extra: dict[str, tuple[str, str]] | None = None) -> LazyGroup:
    """The `factres` group with resolver's commands plus `extra` (name -> (target, help))."""

    @click.group(cls=LazyGroup, lazy={**COMMANDS, **(extra or {})},
                 context_settings=CONTEXT_SETTINGS)
    @click.version_option(package_name="factres")
    def main() -> None:
        """factres: a deterministic resolver for MemoryAgentBench FactConsolidation.

        Parse haystacks, compile questions into plans, resolve them by path search, and score
        the answers exactly as MemoryAgentBench does.

        Example: factres run
        """
    return main


main = make_main()

__all__ = ["COMMANDS", "LazyGroup", "main", "make_main"]
