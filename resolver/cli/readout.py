"""`factres readout` (a run's questions read out for an LLM reader) and `factres prune` (a
context without its superseded facts)."""
from __future__ import annotations

import sys

import click
import orjson

import resolver.escape as escape
from resolver.cli.options import library_errors, results_dir_option
from resolver.errors import InputError

DISCLOSE_CHOICES = ("history", "alternatives", "support")


def disclose_option(func):
    return click.option("--disclose", "disclose", multiple=True,
                        type=click.Choice(DISCLOSE_CHOICES),
                        help="Add a section per mode, in the order given: history (older "
                             "versions, and where the path leads from each), alternatives "
                             "(a contested key's competing values), support (the evidence "
                             "lines). Repeat for several.")(func)


def budget_option(default_help: str):
    return click.option("--budget", type=int, default=None, metavar="CHARS",
                        help=f"At most this many characters ({default_help}).")


@click.command("readout")
@click.argument("run")
@click.argument("qids", nargs=-1, required=True, metavar="QID...")
@disclose_option
@budget_option("default 600")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list: qid, question, readout, chars.")
@results_dir_option()
@library_errors
def readout_command(run: str, qids: tuple[str, ...], disclose: tuple[str, ...],
                    budget: int | None, as_json: bool, results_dir: str | None) -> None:
    """Print the readout of a run's questions: the memory's state for each question as short
    text for a language model to read, one line per cell, `[#serial] subject | relation =
    value`, the winning path's cells first, then the rival paths' in rank order, cut to the
    budget (see the docs: A readout for an LLM reader).

    RUN is a run id or a run folder; the store is rebuilt from the data it names
    (sha256-checked) and the paths from its traces.jsonl, so the readout is the one whose size
    the run recorded in readout.jsonl. With several QIDs each readout follows a line `# QID:
    question`.

    Example: factres readout dev-6k-search-confidence factconsolidation_mh_6k_no0 --disclose history
    """
    from resolver.report.readouts import run_readouts
    from resolver.results.reader import read_run
    found = run_readouts(read_run(run, results_dir), qids, disclose=disclose, budget=budget)
    if as_json:
        click.echo(orjson.dumps([r.to_json() for r in found],
                                option=orjson.OPT_INDENT_2).decode())
        return
    blocks = [r.text if len(found) == 1 else f"# {escape.terminal(r.qid)}: "
              f"{escape.terminal(r.question)}\n{r.text}" for r in found]
    # the readout's fields are escaped by its renderer: one line is one line
    click.echo("\n\n".join(blocks))


@click.command("prune")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@library_errors
def prune_command(file: str) -> None:
    """Print a context without its superseded facts: each numbered fact is dropped when the
    context holds a fact of the same key (subject, relation) with a higher serial; text that
    does not parse is kept as it is (P-Mem's graph-guided pruning).

    FILE is a text file of numbered facts, one per line or many on a line as the harness's
    chunks have them ("-" or nothing: standard input). The pruned text goes to standard output
    as it is, byte for byte where nothing was dropped; the counts (facts kept, dropped, text
    that does not parse) go to standard error.

    Example: factres prune resolver/data/fc/factconsolidation_32k_context.txt
    """
    from resolver.store.prune import prune
    data = sys.stdin.buffer.read() if file == "-" else _read(file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}",
                         path="standard input" if file == "-" else file,
                         expected="a UTF-8 text of numbered facts") from None
    pruned = prune(text)
    sys.stdout.buffer.write(pruned.text.encode("utf-8"))
    sys.stdout.flush()
    click.echo(f"prune: {pruned.kept + pruned.dropped} facts, {pruned.dropped} superseded and "
               f"dropped, {pruned.kept} kept; {pruned.unparsed} piece(s) of text that fit no "
               "template kept as they are", err=True)


def _read(file: str) -> bytes:
    try:
        with open(file, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror or exc}", path=file,
                         expected="a readable text file") from None
