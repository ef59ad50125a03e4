"""The full `factres` command line: resolver's commands plus the `oracle` group.

The console script points here because oracle/ may import resolver/, never the reverse. Like
resolver's commands, the oracle group is loaded only when it runs, and each analysis module only
when its command runs."""
from __future__ import annotations

import click

from resolver.cli import make_main
from resolver.cli.options import data_option, library_errors

__all__ = ["main", "oracle"]

main = make_main({"oracle": ("oracle.cli:oracle", "Analyses that read gold: gold paths, versions, "
                             "ceilings, misses, N-best, signals.")})


@click.group("oracle")
def oracle() -> None:
    """Analyses that read gold: gold paths, versions, ceilings, misses, N-best, signals.

    Each command writes `<command>.json` and `<command>.md` into a new folder
    results/oracle-<command>-<data tag or run id>/ (never overwritten: -2, -3, ... or --out).

    Example: factres oracle ceiling
    """


def _out_option():
    return click.option("--out", type=click.Path(file_okay=False),
                        help="Write into this folder (it must not exist) instead of "
                             "results/oracle-<command>-<tag>/.")


def _report(analysis, out) -> None:
    from .report import write
    folder = write(analysis, out)
    click.echo(f"wrote {folder / (analysis.command + '.json')} and "
               f"{folder / (analysis.command + '.md')}")


@oracle.command("paths")
@data_option()
@click.option("--max-hops", default=5, show_default=True, type=click.IntRange(1, 8),
              help="Longest path searched.")
@_out_option()
@library_errors
def paths_command(data, max_hops, out) -> None:
    """For every multi-hop question: is there a gold path from the plan's base entity (or any
    entity the question names), the shortest ones, and the version each hop takes.

    Example: factres oracle paths --data resolver/data/fc/factconsolidation_6k.json
    """
    from .paths import analyse
    _report(analyse(data, max_hops), out)


@oracle.command("versions")
@data_option()
@_out_option()
@library_errors
def versions_command(data, out) -> None:
    """Single-hop: is the gold the latest, the first or another version of its key. Multi-hop:
    is the gold reachable with the latest at every hop, the first at every hop, or a mix.

    Example: factres oracle versions
    """
    from .versions import analyse
    _report(analyse(data), out)


@oracle.command("ceiling")
@data_option()
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=60.0,
              show_default=True, metavar="S",
              help="Seconds the solver may take for the whole call; past it the figures are "
                   "the best found, marked FEASIBLE with the solver's bound.")
@_out_option()
@library_errors
def ceiling_command(data, time_limit, out) -> None:
    """The exact best any one-version-per-key store can score (CP-SAT, one store per
    haystack, its single-hop and multi-hop questions jointly), what "latest wins" scores, and
    the contested keys, per haystack and per source. Says whether the optimum is proven.

    Example: factres oracle ceiling --time-limit 30
    """
    from .ceiling import OPTIMAL, analyse, status_sentence
    analysis = analyse(data, time_limit)
    _report(analysis, out)
    if analysis.payload["status"] != OPTIMAL:
        click.echo("note: " + status_sentence(analysis.payload), err=True)


@oracle.command("misses")
@click.argument("run")
@_out_option()
@library_errors
def misses_command(run, out) -> None:
    """Sort every miss of a run into the bucket where it broke: no gold path, reader, selection,
    older version, plan error (wrong entity, near synonym, hop short, padded, swapped), search.
    RUN is a run id under results/ or a run folder.

    Example: factres oracle misses 20250101-abc123-1
    """
    from .misses import analyse
    _report(analyse(run), out)


@oracle.command("nbest")
@click.argument("run")
@_out_option()
@library_errors
def nbest_command(run, out) -> None:
    """Plan recall@N against success@N over the run's plan sets, N = 1, 2, ...
    RUN is a run id under results/ or a run folder.

    Example: factres oracle nbest 20250101-abc123-1
    """
    from .nbest import analyse
    _report(analyse(run), out)


@oracle.command("signals")
@data_option()
@_out_option()
@library_errors
def signals_command(data, out) -> None:
    """Which signals a store could read separate hops whose gold takes an older version from
    hops taking the latest: object degree, object's own facts, tie back to the subject, another
    question's plan needing the key, serial distance, position by decile.

    Example: factres oracle signals
    """
    from .signals import analyse
    _report(analyse(data), out)
