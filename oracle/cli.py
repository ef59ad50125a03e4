"""The full `factres` command line: resolver's commands plus the `oracle` group.

The console script points here because oracle/ may import resolver/, never the reverse. Like
resolver's commands, the oracle group is loaded only when it runs, and each analysis module only
when its command runs."""
from __future__ import annotations

import functools
from pathlib import Path

import click

from resolver.cli import make_main
from resolver.cli.options import (
    OutFolder,
    Seconds,
    data_option,
    library_errors,
    results_dir_option,
)

__all__ = ["explain_command", "main", "oracle"]

main = make_main({
    "oracle": ("oracle.cli:oracle", "Analyses that read gold: gold paths, versions, "
               "ceilings, misses, N-best, signals, calibration."),
    "explain": ("oracle.cli:explain_command", "Explain why questions of a run got their "
                "answers: the reading, the winning path hop by hop, the best rival paths with "
                "their score terms side by side, and where the gold is."),
})


@click.group("oracle")
def oracle() -> None:
    """Analyses that read gold: gold paths, versions, ceilings, misses, N-best, signals,
    calibration.

    Each command writes `<command>.json` and `<command>.md` into a new folder
    <results>/oracle-<command>-<data tag or run id>/ (never overwritten: -2, -3, ... or --out),
    where <results> is --results-dir, else $FACTRES_RESULTS, else ./factres-results; RUN is
    looked up there, then in the repository's committed results/ (read only).

    Example: factres oracle ceiling
    """


def _output_options():
    """--out and --results-dir, which every oracle command takes."""
    out = click.option("--out", type=OutFolder(),
                       help="Write into this folder (it must not exist) instead of "
                            "<results>/oracle-<command>-<tag>/.")
    results = results_dir_option("Where run folders are read and oracle folders written")

    def both(command):
        @functools.wraps(command)
        def writable_first(*args, **kwargs):
            # an analysis can take a while: a folder it cannot write fails before it starts
            from resolver.results.result_schema import results_root
            from resolver.run.run_folder import ensure_writable
            target = kwargs.get("out")
            ensure_writable(Path(target).parent if target else results_root(
                kwargs.get("results_dir")))
            return command(*args, **kwargs)
        return out(results(library_errors(writable_first)))
    return both


def _run_folder(run, results_dir):
    """RUN as a folder: a path, or a run id under the results folder."""
    from resolver.results.reader import find_run
    return find_run(run, results_dir)


def _report(analysis, out, results_dir, table: str | None = None) -> None:
    """Write the analysis's folder, print its summary (`table`, else the Markdown up to the
    per-question detail) on stdout and say where the files are on stderr."""
    from .report import summary, write
    folder = write(analysis, out, results_dir)
    click.echo(summary(analysis) if table is None else table, nl=False)
    click.echo(f"wrote {folder / (analysis.command + '.json')} and "
               f"{folder / (analysis.command + '.md')}", err=True)


@oracle.command("paths")
@data_option()
@click.option("--max-hops", default=5, show_default=True, type=click.IntRange(1, 8),
              help="Longest path searched.")
@_output_options()
@library_errors
def paths_command(data, max_hops, out, results_dir) -> None:
    """For every multi-hop question: is there a gold path from the plan's base entity (or any
    entity the question names), the shortest ones, and the version each hop takes.

    Example: factres oracle paths --data resolver/data/fc/factconsolidation_6k.json
    """
    from .paths import analyse
    _report(analyse(data, max_hops), out, results_dir)


@oracle.command("versions")
@data_option()
@_output_options()
@library_errors
def versions_command(data, out, results_dir) -> None:
    """Single-hop: is the gold the latest, the first or another version of its key. Multi-hop:
    is the gold reachable with the latest at every hop, the first at every hop, or a mix.

    Example: factres oracle versions
    """
    from .versions import analyse
    _report(analyse(data), out, results_dir)


@oracle.command("ceiling")
@data_option()
@click.option("--time-limit", type=Seconds(), default=60.0,
              show_default=True, metavar="S",
              help="Seconds the solver may take for the whole call; past it the figures are "
                   "the best found, marked FEASIBLE with the solver's bound.")
@_output_options()
@library_errors
def ceiling_command(data, time_limit, out, results_dir) -> None:
    """The exact best any one-version-per-key store can score (CP-SAT, one store per
    haystack, its single-hop and multi-hop questions jointly), what "latest wins" scores, and
    the contested keys, per haystack and per source. Says whether the optimum is proven.

    Example: factres oracle ceiling --time-limit 30
    """
    from .ceiling import OPTIMAL, analyse, status_sentence
    analysis = analyse(data, time_limit)
    if analysis.payload["status"] != OPTIMAL:
        click.echo("note: " + status_sentence(analysis.payload), err=True)
    _report(analysis, out, results_dir)


@oracle.command("misses")
@click.argument("run")
@_output_options()
@library_errors
def misses_command(run, out, results_dir) -> None:
    """Sort every miss of a run into the bucket where it broke, named as the output names them:
    abstained, no_gold_path, reader_error, selection_error, needs_older_version,
    plan_error:no_plan,
    plan_error:wrong_base_entity, plan_error:near_synonym, plan_error:hop_short,
    plan_error:hop_padded, plan_error:swapped, plan_error:other, search_error. An imported run
    (factres score) has no plans: no_gold_path, unanswered, needs_older_version, stale,
    latest_path_missed. An abstained question (a run made with --abstain-below) is no error of
    the resolver: its detail says whether the resolver's own answer was right.
    RUN is a run id under the results folder or a run folder.

    Example: factres oracle misses dev-6k-search-nbest-2
    """
    from .misses import analyse
    _report(analyse(_run_folder(run, results_dir), results_dir), out, results_dir)


@oracle.command("nbest")
@click.argument("run")
@_output_options()
@library_errors
def nbest_command(run, out, results_dir) -> None:
    """Plan recall@N against success@N over the run's plan sets, N = 1, 2, ...
    RUN is a run id under the results folder or a run folder.

    Example: factres oracle nbest dev-6k-search-nbest-2
    """
    from .nbest import analyse
    _report(analyse(_run_folder(run, results_dir), results_dir), out, results_dir)


@oracle.command("calibration")
@click.argument("runs", nargs=-1, required=True)
@_output_options()
@library_errors
def calibration_command(runs, out, results_dir) -> None:
    """How the confidence labels sort right answers from wrong ones: per label, the precision
    (share right) and the coverage (share of questions at or above it), per run and pooled. A
    row marked unanswerable (metadata.unanswerable: true, run with --split test) is right only
    when left unanswered. Each label is judged on the resolver's own answer, also where a run
    made with --abstain-below left the question unanswered (the abstentions are counted apart).
    Runs over the same questions are not pooled; a --split test run is calibrated on its
    unanswerable rows only. Prints the summary table. RUN is a run id or a run folder.

    Example: factres oracle calibration dev-6k-search-confidence dev-6k-plain-confidence
    """
    import resolver.escape as escape

    from .calibration import HEADERS, analyse, notes, summary_rows
    from .report import md_table
    analysis = analyse(runs, results_dir)
    _report(analysis, out, results_dir, md_table(HEADERS, summary_rows(analysis.payload)))
    for note in notes(analysis.payload):
        click.echo("note: " + escape.terminal("".join(note)), err=True)


@oracle.command("signals")
@data_option()
@_output_options()
@library_errors
def signals_command(data, out, results_dir) -> None:
    """Which signals a store could read separate hops whose gold takes an older version from
    hops taking the latest: object degree, object's own facts, tie back to the subject, another
    question's plan needing the key, serial distance, position by decile.

    Example: factres oracle signals
    """
    from .signals import analyse
    _report(analyse(data), out, results_dir)


@click.command("explain")
@click.argument("run")
@click.argument("qids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per question (a list).")
@results_dir_option()
@library_errors
def explain_command(run, qids, as_json, results_dir) -> None:
    """Explain why questions of a run got their answers: the reading, the winning path hop by
    hop, the best rival paths with their score terms side by side, and where the gold is.

    RUN is a run id (under --results-dir, $FACTRES_RESULTS or ./factres-results, then the
    repository's committed results/) or a run folder; an
    imported run (factres score) shows its prediction against the gold paths. The reading is
    the current code's; paths, versions and score terms are the run's own.

    Example: factres explain dev-6k-search-reading factconsolidation_mh_6k_no82
    """
    from .explain import explain, render
    explanations = explain(run, list(qids), results_dir)
    if as_json:
        from resolver.results.result_schema import dumps
        click.echo(dumps(explanations).decode("utf-8"), nl=False)
    else:
        click.echo(render(explanations), nl=False)


def __getattr__(name: str):
    # `reference`: the whole tree as the CLI reference page shows it (docs/cli.md, mkdocs-click),
    # built only when the docs ask, since it loads every command
    if name == "reference":
        from resolver.cli.reference import for_docs
        return for_docs(main)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
