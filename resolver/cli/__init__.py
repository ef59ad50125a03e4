"""The `factres` command line: a thin door onto the library.

Each command parses its options, calls one library function and formats the result. Library
errors (`FactresError`) become `click.ClickException` here and nowhere else. The oracle command
group is attached in oracle/cli.py (oracle depends on resolver, never the other way round), and
that is where the console script points."""
from __future__ import annotations

import functools

import click

from ..errors import FactresError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="factres")
def main() -> None:
    """factres: a deterministic resolver for MemoryAgentBench FactConsolidation.

    Parse haystacks, compile questions into plans, resolve them by path search, and score the
    answers exactly as MemoryAgentBench does.

    Example: factres run
    """


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


# Command modules register themselves on `main` when imported.
from . import parse as _parse  # noqa: E402,F401
from . import plans as _plans  # noqa: E402,F401
from . import provenance as _provenance  # noqa: E402,F401
from . import run as _run  # noqa: E402,F401
from . import tables as _tables  # noqa: E402,F401
