"""`factres parse`."""
from __future__ import annotations

import click

from . import main, library_errors


@main.command("parse")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--strict", is_flag=True, help="Exit non-zero if any line fits no template.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-cache", is_flag=True, help="Parse afresh; do not read or write the cache.")
@library_errors
def parse_command(path: str, strict: bool, as_json: bool, no_cache: bool) -> None:
    """Parse a haystack and report lines, facts, unparsed lines and version statistics.

    Example: factres parse resolver/data/fc/factconsolidation_262k_context.txt
    """
    raise click.ClickException("not implemented yet")
