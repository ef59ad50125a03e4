"""`factres compare`: runs side by side, question by question, with paired statistics."""
from __future__ import annotations

import click

import resolver.escape as escape
from resolver.cli.options import OutFolder, library_errors, results_dir_option
from resolver.report import compare, compare_report


@click.command("compare")
@click.argument("runs", nargs=-1, required=True, metavar="RUN_A RUN_B [RUN]...")
@click.option("--format", "fmt", type=click.Choice(compare_report.FORMATS), default="md",
              show_default=True,
              help="What to print: Markdown, LaTeX (a booktabs tabular for \\input{}) or JSON.")
@click.option("--out", type=OutFolder(),
              help="Also write compare.md, compare.tex and compare.json into this folder, "
                   "which must be new (an existing one is refused: nothing is overwritten).")
@click.option("--intersect", is_flag=True,
              help="Compare the questions every run has and say how many were dropped per "
                   "source. Without it, runs over different questions are refused.")
@results_dir_option("Where run folders are")
@library_errors
def compare_command(runs, fmt, out, intersect, results_dir) -> None:
    """Compare runs question by question: EM per source and pooled, the paired difference with
    its bootstrap interval, the exact McNemar test and the questions that flipped.

    RUN is a run id under the results dir or a run folder path, a run of factres or an
    imported one; the first is the baseline, A, and each other run, B, is compared with it
    over the same questions. Per source (one kind at one size) and pooled per kind (the mean
    over sizes, resampled within each size): both EMs, B - A with its paired bootstrap 95%
    interval, the exact McNemar p (two-sided), the counts A only and B only right, and the ids
    of those questions. Refused, naming the run and the question: a run not found or
    incomplete, an unscored (test split) run, runs whose source, question or gold disagree on a
    question id, and runs over different questions (unless --intersect).

    Example: factres compare dev-6k-plain-confidence dev-6k-search-confidence
    """
    if len(runs) < 2:
        raise click.UsageError("give a baseline run and at least one run to compare with it")
    comparison = compare.compare_runs(runs, results_dir, intersect=intersect)
    written = compare_report.write_report(comparison, out) if out is not None else []
    click.echo(compare_report.render(comparison, fmt), nl=False)
    for path in written:
        click.echo(f"wrote {escape.terminal(str(path))}", err=True)
    for note in comparison.notes:   # what the reader could not check (a run's data not found)
        click.echo(f"note: {escape.terminal(note)}", err=True)
