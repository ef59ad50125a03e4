"""`factres parse`: parse a haystack and report what was found."""
from __future__ import annotations

import click
import orjson

import resolver.escape as escape
from resolver.cli.options import collector_paused, library_errors
from resolver.errors import UnparsedLinesError, clip
from resolver.haystack import parse_report
from resolver.text.facts import UnparsedLine

# Unparsed lines listed in the text report; --json lists them all.
SHOWN = 5


@click.command("parse")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--strict", is_flag=True, help="Exit non-zero if any line fits no template.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-cache", is_flag=True, help="Parse afresh; do not read or write the cache.")
@library_errors
def parse_command(path: str, strict: bool, as_json: bool, no_cache: bool) -> None:
    """Parse a haystack and report lines, facts, unparsed lines and version statistics.

    PATH is a context (.txt) or a file of Hugging Face rows (.json, .jsonl, .parquet); each
    distinct context in it is reported once. Lines that fit no template are listed with their
    line number; with --strict they make the command fail. A line holding several numbered
    facts (a harness chunk's layout) is read as its facts, as the memory reads it, and noted.
    Correction lines ("Correction: S, not X.", "The report that S was an error.", ...; see
    docs/memory.md) are counted by the operations they do, as `factres run` applies them.

    Example: factres parse resolver/data/fc/factconsolidation_262k_context.txt
    """
    with collector_paused():
        reports = parse_report(path, use_cache=not no_cache)
    if as_json:
        click.echo(orjson.dumps(reports if len(reports) > 1 else reports[0],
                                option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode())
    else:
        click.echo("\n\n".join(_text(report) for report in reports))
    bad = [UnparsedLine(u["line"], u["text"], u["reason"])
           for report in reports for u in report["unparsed_lines"]]
    if strict and bad:
        first = next(r for r in reports if r["unparsed"])
        raise UnparsedLinesError(path, bad, row=first["row"])


def _text(report: dict) -> str:
    """The report as text for the terminal: an unparsed line cut to 200 characters (--json has
    it whole), user text (paths, lines, names) escaped."""
    out = [
        f"path: {escape.terminal(report['path'])}",
        f"context sha256: {report['context_sha256']}",
        f"lines: {report['lines']} (header: {'yes' if report['header'] else 'no'}, "
        f"blank: {report['blank_lines']})",
        f"facts: {report['facts']}",
    ]
    if report["corrections"]:
        ops = ", ".join(f"{op} {n}" for op, n in report["corrections_by_operation"].items())
        out.append(f"correction lines: {report['corrections']} ({ops or 'nothing changed'})")
        for c in report["corrections_changing_nothing"][:SHOWN]:
            out.append(f"  line {c['line']}: {escape.terminal(clip(c['text']))}  "
                       f"({escape.terminal(c['note'])})")
    out.append(f"unparsed lines: {report['unparsed']}")
    for u in report["unparsed_lines"][:SHOWN]:
        out.append(f"  line {u['line']}: {escape.terminal(clip(u['text']))}  ({u['reason']})")
    if report["unparsed"] > SHOWN:
        out.append(f"  ... and {report['unparsed'] - SHOWN} more (--json lists them all)")
    out += [
        f"keys: {report['keys']}",
        f"keys with more than one version: {report['keys_with_several_versions']}",
        f"deepest version chain: {report['deepest_version_chain']}",
        f"entities: {report['entities']}",
        f"relations: {len(report['relations'])}",
    ]
    width = max((len(name) for name in report["relations"]), default=0)
    out += [f"  {name:<{width}}  {count:>6}" for name, count in report["relations"].items()]
    out += [f"note: {escape.terminal(note)}" for note in report["notes"]]
    return "\n".join(out)
