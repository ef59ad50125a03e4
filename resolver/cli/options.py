"""What every command module shares: the context settings, the turn of library errors into clean
messages, and the options that recur. Command modules import this, never the group."""
from __future__ import annotations

import functools

import click

from resolver.errors import FactresError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def library_errors(func):
    """Turn the library's own errors into a clean message and exit status 1."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except FactresError as exc:
            raise click.ClickException(str(exc)) from None
    return wrapper


def data_option(required: bool = False, help_text: str | None = None):
    return click.option("--data", "data", multiple=True, required=required,
                        type=click.Path(dir_okay=False),
                        help=help_text or "Haystack file (.json, .jsonl, .parquet or .txt); "
                        "repeat for several. Default: the bundled 6K dev rows.")


def results_dir_option(what: str = "Where run folders are"):
    """--results-dir: one results folder for every command that reads or writes run and
    oracle folders (resolver.run.result_schema.results_root)."""
    return click.option("--results-dir", type=click.Path(file_okay=False),
                        help=f"{what}. Default: $FACTRES_RESULTS, else ./results.")
