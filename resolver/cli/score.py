"""`factres score`: another system's predictions, scored as MemoryAgentBench does and recorded as
an imported run."""
from __future__ import annotations

import click

import resolver.escape as escape
from resolver.cli.options import data_option, library_errors, results_dir_option
from resolver.exchange import imported
from resolver.mab.result_files import FIELDS, FORMATS, parse_field_map


@click.command("score")
@click.argument("files", nargs=-1, required=True, metavar="FILE...",
                type=click.Path())
@data_option(help_text="Rows holding the questions and the gold the predictions are scored "
             "against (.json, .jsonl, .parquet); repeat for several. Default: the bundled 6K "
             "dev rows.")
@click.option("--name", help="The system's name: its row in the tables, and the run id when "
                             "--run-id is not given. Default: the harness files' "
                             "agent_config.agent_name, else the first file's name.")
@click.option("--field", "field_pairs", multiple=True, metavar="FIELD=NAME",
              help=f"Which key of a JSONL, CSV or JSON record holds FIELD ({', '.join(FIELDS)}); "
                   "repeatable. Defaults: qa_pair_id or qid, prediction or output, gold, golds "
                   "or answers, source; no em. Harness files always use their own names "
                   "(qa_pair_id, output, answer, substring_exact_match).")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="The files' format. Default: detected (a .json object with 'data' is the "
                   "harness's, a .json list generic records; .jsonl; .csv).")
@click.option("--run-id", help="Name of the run folder (must be new, and not a committed "
                               "run's). Default: --name, else imported-<system>-<sizes>-<hash>; "
                               "suffixed -2, -3... if taken.")
@results_dir_option("Where run folders go")
@library_errors
def score_command(files, data, name, field_pairs, fmt, run_id, results_dir) -> None:
    """Score another system's predictions as MemoryAgentBench does and record them as a run in
    <results>/<run-id>/ (meta.json, predictions.jsonl, metrics.json, table.md, table.tex).
    <results> is --results-dir, else $FACTRES_RESULTS, else ./factres-results.

    FILE is a MemoryAgentBench harness output (one per source), the harness's output folder
    (every *_results.json under it), or a JSONL, CSV or JSON file of records with a question id
    and a prediction. Records are joined to the rows by id; the
    rows' gold is scored, as the harness does (the better of the output and the text after its
    "Answer:"). Questions without a record count as unanswered and wrong and are listed; a gold
    or a score in a file that disagrees is reported, never used. Prints the score table.

    Example: factres score tests/data/mab-outputs/factconsolidation_*_results.json
    """
    run = imported.score_files(files, data=data, name=name,
                               fields=parse_field_map(field_pairs), fmt=fmt,
                               results=results_dir, run_id=run_id)
    click.echo(run.table, nl=False)
    click.echo(f"\nrun {run.run_id} written to {escape.terminal(str(run.path))}/")
    # the findings quote the files: their paths, ids, names and golds
    for line in imported.findings(run.meta):
        click.echo(escape.terminal(line), err=True)
