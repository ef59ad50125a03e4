"""What every command module shares: the context settings, the turn of library errors into clean
messages, and the options that recur. Command modules import this, never the group."""
from __future__ import annotations

import contextlib
import functools
import gc
import math
import warnings
from pathlib import Path

import click

import resolver.escape as escape
from resolver.errors import FactresError, FactresNote, InputError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def library_errors(func):
    """Turn the library's own errors into a clean message and exit status 1; a file system error
    the library did not foresee (a full disk, a folder that became read-only mid-run) becomes
    one line naming the file too, never a traceback. Messages quote user text (names, lines,
    paths): it is escaped for the terminal here, once (an InputError part by part, so that only
    its own line break is kept), keeping the message's own line breaks."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            with notes_shown():
                return func(*args, **kwargs)
        except InputError as exc:
            # each part of the message escaped on its own: a line break in a name it quotes
            # is shown, not kept (the message's own break before its context stays)
            raise click.ClickException(exc.render(escape.terminal)) from None
        except FactresError as exc:
            raise click.ClickException(escape.terminal(str(exc), lines=True)) from None
        except BrokenPipeError:
            # the reader of our output went away (`factres plans show ... | head`): click's
            # main silences the streams and exits, with no message, as a pipe's writer should
            raise
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(escape.terminal(f"{where}{exc.strerror or exc}",
                                                       lines=True)) from None
    return wrapper


@contextlib.contextmanager
def notes_shown():
    """The library's notes (`FactresNote` warnings: which of two folders of one name was
    read) printed on stderr as they come, each once, as `note: ...` lines."""
    shown: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if issubclass(category, FactresNote) and text not in shown:
            shown.add(text)
            click.echo(f"note: {escape.terminal(text)}", err=True)
        elif not issubclass(category, FactresNote):
            previous(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        previous = warnings.showwarning
        warnings.simplefilter("always", FactresNote)
        warnings.showwarning = show
        yield


class Seconds(click.ParamType):
    """A finite number of seconds above 0: "nan", "inf" and 0 are refused at the option, not
    passed on to fail elsewhere (float("nan") passes any range check)."""
    name = "seconds"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            try:
                number = float(value)
            except ValueError:
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(number) or number <= 0:
            self.fail(f"{value!r} is not a finite number of seconds above 0", param, ctx)
        return number


class Jobs(click.ParamType):
    """`--jobs`: "auto" or a whole number of worker processes of at least 1."""
    name = "jobs"

    def convert(self, value, param, ctx):
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool)
                               and value >= 1):
            return value
        text = str(value).strip()
        if text.isdigit() and int(text) >= 1:
            return int(text)
        self.fail(f"{value!r} is neither auto nor a whole number of at least 1", param, ctx)


class OutFolder(click.Path):
    """A folder to write into (`--out`, `--results-dir`): an empty value, or a path at or under
    a file, is refused at the option, saying which ("--out is empty", "afile is a file"), before
    any work and before a misleading "'.' exists" or "File exists" from the writer (audit E,
    E59), or an empty --results-dir read as the default folder (verification U)."""

    def __init__(self, empty: str = "name a folder to write into") -> None:
        super().__init__(file_okay=False)
        self.empty = empty

    def convert(self, value, param, ctx):
        name = param.opts[0] if param is not None else "the folder"
        if isinstance(value, str) and not value.strip():
            raise click.UsageError(f"{name} is empty: {self.empty}", ctx)
        path = Path(value)
        for folder in (path, *path.parents):
            if folder.exists() and not folder.is_dir():
                raise click.UsageError(
                    f"{name} {escape.terminal(str(value))}: {escape.terminal(str(folder))} is "
                    "a file, not a folder", ctx)
        return super().convert(value, param, ctx)


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused while a command builds many long-lived objects
    and frees few (facts, stores, ledgers, hops, candidates, traces): its passes would only
    scan them again and again, about a fifth of a whole run's time (benchmarks/commands.py).
    Nothing is lost: the collector runs again afterwards (if it was on)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # Everything allocated meanwhile sits in the youngest generation: move it to the
        # oldest in one step (freeze, then unfreeze) instead of letting the next young
        # collection walk all of it.
        gc.freeze()
        gc.unfreeze()
        if was_on:
            gc.enable()


def data_option(required: bool = False, help_text: str | None = None):
    return click.option("--data", "data", multiple=True, required=required,
                        type=click.Path(dir_okay=False),
                        help=help_text or "Haystack file (.json, .jsonl, .parquet or .txt); "
                        "repeat for several. Default: the bundled 6K dev rows.")


def results_dir_option(what: str = "Where run folders are"):
    """--results-dir: one results folder for every command that reads or writes run and
    oracle folders (resolver.results.result_schema.results_root)."""
    return click.option("--results-dir", type=OutFolder(
                            "name the results folder, or leave the option out for "
                            "$FACTRES_RESULTS, else ./factres-results"),
                        help=f"{what}. Default: $FACTRES_RESULTS, else ./factres-results. "
                        "A run id not found there is looked up in the repository's committed "
                        "results/ (read only).")
