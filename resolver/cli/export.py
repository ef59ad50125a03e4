"""`factres export`: a run written as MemoryAgentBench result files."""
from __future__ import annotations

import click

import resolver.escape as escape
from resolver.cli.options import OutFolder, library_errors, results_dir_option
from resolver.exchange import export


@click.command("export")
@click.argument("run", metavar="RUN")
@click.option("--out", type=OutFolder(),
              help="The folder to write, which must be new (an existing one is refused: "
                   "nothing is overwritten). Default: <results dir>/<run name>-mab.")
@click.option("--format", "fmt", type=click.Choice(export.FORMATS), default="mab",
              show_default=True,
              help="mab: MemoryAgentBench result files, one per source, in "
                   "<out>/Conflict_Resolution/.")
@results_dir_option("Where run folders are")
@library_errors
def export_command(run, out, fmt, results_dir) -> None:
    """Write a run as MemoryAgentBench result files, one per source, as the harness names and
    lays them out, so that the tools built for the harness's format read it.

    RUN is a run id under the results dir or a run folder path, a scored run of factres or an
    imported one. Each record has the harness's fields that factres knows (output,
    parsed_output, exact_match, f1, substring_exact_match, answer, query, query_id,
    qa_pair_id), with the metric lists, their averages and the config blocks; what factres
    cannot know (token counts, timings, ROUGE, the model's settings) is left out. factres score
    on the files reproduces the run's per-question EM.

    Example: factres export dev-6k-search-confidence
    """
    result = export.export_run(run, results_dir, out=out, fmt=fmt)
    for path, records in result.files:
        click.echo(f"wrote {escape.terminal(str(path))} ({records} records)")
    for warning in result.warnings:
        click.echo(f"warning: {escape.terminal(warning)}", err=True)
