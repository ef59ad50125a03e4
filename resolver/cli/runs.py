"""`factres runs`: the run folders there are, in the results folder and committed."""
from __future__ import annotations

import click

import resolver.escape as escape
from resolver.cli.options import library_errors, results_dir_option


@click.command("runs")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run (a list).")
@results_dir_option("Where run folders are listed first")
@library_errors
def runs_command(as_json, results_dir) -> None:
    """List the runs: every run folder of the results folder, then the repository's committed
    ones (marked which), with id, label, mode, plan sets, data, sizes, pooled EM and date.

    A run id shown can be given to `table`, `tables`, `compare`, `explain` and the oracle
    commands. A folder that cannot be read is named on stderr with why.

    Example: factres runs --json
    """
    from resolver.report import run_list
    from resolver.results.result_schema import dumps
    entries, skipped = run_list.list_runs(results_dir)
    if as_json:
        click.echo(dumps(run_list.as_json(entries)).decode("utf-8"))
    else:
        click.echo(run_list.render(entries), nl=False)
    for line in skipped:
        click.echo(f"warning: skipped {escape.terminal(line)}", err=True)
