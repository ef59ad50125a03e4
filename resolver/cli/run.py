"""`factres run` and `factres table`."""
from __future__ import annotations

import sys

import click

import resolver.escape as escape
from resolver.cli.options import (
    Jobs,
    Seconds,
    collector_paused,
    data_option,
    library_errors,
    results_dir_option,
)
from resolver.errors import InputError, place
from resolver.run import protocol, runs, tables


class _Bars:
    """One click progress bar per stage of a run, on stderr."""

    def __init__(self) -> None:
        self._bar = None

    def __call__(self, label: str, total: int):
        self.close()
        self._bar = click.progressbar(length=total, label=label, file=sys.stderr)
        self._bar.__enter__()
        return self._bar.update

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@click.command("run")
@data_option()
@click.option("--plans", "plans", multiple=True, metavar="SET",
              help="Plan set: live:rules, live:lexicon, an archived set id or folder; repeat "
                   "for several, tried in order. Default: live:rules then live:lexicon.")
@click.option("--split", type=click.Choice(runs.SPLITS), default="dev", show_default=True,
              help="dev: score against gold. test: write predictions, never read gold.")
@click.option("--run-id", help="Name of the run folder (must be new, and not a committed "
                               "run's). Default: <split>-<sizes>-<mode>-<config hash>, "
                               "suffixed -2, -3... if taken.")
@click.option("--name", metavar="LABEL", help="The run's label: its row's name in the paper "
              "tables and in `factres runs` (meta.json label). Default: factres <mode>.")
@results_dir_option("Where run folders go")
@click.option("--reader", metavar="SPEC", help="Reader lane, e.g. ollama:qwen2.5:3b: the "
              "prediction becomes the reader's answer from the winning path's fact lines.")
@click.option("--repair", metavar="SPEC", help="Repair lane, e.g. ollama:qwen2.5:3b: new plans "
              "for questions whose answer the selector distrusts.")
@click.option("--host", help="Ollama host for --reader and --repair (default: ollama's).")
@click.option("--timeout", type=Seconds(), default=30.0, show_default=True,
              help="Seconds per model call.")
@click.option("--mode", type=click.Choice(["search", "plain"]), default=None,
              help="search: the relaxed scored path search; plain: execute the plans in order, "
              "latest version at every hop (the baseline). Default: the frozen "
              "configuration's, else search.")
@click.option("--config", "frozen", type=click.Path(dir_okay=False),
              help="Frozen configuration (factres freeze) the run must match; required for "
                   "--split test. Supplies the plan sets and mode.")
@click.option("--allow-dirty", is_flag=True,
              help="Let a test run go from a dirty tree or without a matching frozen "
                   "configuration; meta.json and every table row built from it say so.")
@click.option("--strict", is_flag=True,
              help="Exit 1, before resolving, if a fact line fits no template (else they are "
                   "counted on stderr and in meta.json).")
@click.option("--allow-partial-plans", is_flag=True,
              help="Run with an archived plan set that has plans for none of the questions "
                   "(partial coverage is only a warning).")
@click.option("--abstain-below", type=click.Choice(["low", "medium", "high"]), default=None,
              metavar="LEVEL", help="Leave unanswered (with the reason) every question whose "
              "answer's confidence label is below LEVEL: low, medium or high (recorded in "
              "meta.json; the label is in every row either way).")
@click.option("--no-cache", is_flag=True, help="Parse afresh; do not read or write the cache.")
@click.option("--jobs", type=Jobs(), default="auto", show_default=True, metavar="N|auto",
              help="Worker processes that compile and search the questions: auto (one per "
              "core, up to 4, when the run has questions enough to repay them and stores of "
              "at most 250,000 facts; Linux only) or a number (1: none). The run's files are "
              "the same whatever it is.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: when stderr is a terminal).")
@library_errors
def run_command(data, plans, split, run_id, name, results_dir, reader, repair, host, timeout,
                mode, frozen, allow_dirty, strict, allow_partial_plans, abstain_below,
                no_cache, jobs, progress) -> None:
    """Resolve every question, score it as MemoryAgentBench does, and record the run in
    <results>/<run-id>/ (meta.json, predictions.jsonl, traces.jsonl, metrics.json, table.md,
    table.tex). Prints the score table. Existing runs are never overwritten.

    <results> is --results-dir, else $FACTRES_RESULTS, else ./factres-results.

    Dev is 6K; test is 32K, 64K and 262K: a test run needs --config (a frozen configuration
    the checkout matches) and a clean git tree, unless --allow-dirty, which marks it.

    Example: factres run
    """
    config = runs.RunConfig(data=tuple(data), plans=tuple(plans), split=split, reader=reader,
                            repair=repair, host=host, timeout=timeout, mode=mode,
                            frozen=frozen, allow_dirty=allow_dirty, strict=strict,
                            allow_partial_plans=allow_partial_plans,
                            abstain_below=abstain_below)
    if progress is None:
        progress = sys.stderr.isatty()
    bars = _Bars() if progress else None
    try:
        with collector_paused():
            run = runs.execute(config, results=results_dir, run_id=run_id, progress=bars,
                               use_cache=not no_cache, label=name, jobs=jobs)
    finally:
        if bars is not None:
            bars.close()
    click.echo(run.table, nl=False)
    click.echo(f"\nrun {run.run_id} written to {escape.terminal(str(run.path))}/")
    _report_input(run.meta)
    record = run.meta["protocol"]          # (not the `protocol` module)
    off = record["off_split_sources"]
    if off:
        other = "test" if record["split"] == "dev" else "dev"
        what = "is a source" if len(off) == 1 else "are sources"
        click.echo(f"note: {', '.join(off)} {what} of the {other} split (dev is 6K; test is "
                   "32K, 64K and 262K); recorded in meta.json", err=True)
    neither = protocol.neither_split_note(row["source"] for row in run.predictions)
    if neither:
        click.echo(f"note: {escape.terminal(neither)}", err=True)
    if record["frozen"] and record["frozen_commit"] != record["commit"]:
        click.echo(f"note: frozen at commit {str(record['frozen_commit'])[:12]}, run at "
                   f"{str(record['commit'])[:12]}: every package file, version, plan set and "
                   "weight matches; recorded in meta.json", err=True)
    if record["allow_dirty"] or (record["split"] == "test" and not record["frozen"]):
        click.echo("warning: run admitted with --allow-dirty (dirty tree: "
                   f"{'yes' if record['dirty'] else 'no'}, frozen configuration: "
                   f"{'yes' if record['frozen'] else 'no'}); marked so in meta.json and in "
                   "every table row built from it", err=True)
    failures = run.meta["counts"]["reader_failures"]
    if failures:
        click.echo(f"warning: the reader gave no answer for {failures} of "
                   f"{run.meta['counts']['questions']} question(s); see the reader field "
                   "of traces.jsonl", err=True)


@click.command("table")
@click.argument("run")
@click.option("--format", "fmt", type=click.Choice(sorted(tables.RENDERERS)), default="md",
              show_default=True, help="Markdown or LaTeX (booktabs).")
@click.option("--read-size", is_flag=True,
              help="Add the mean read size: the characters of each question's readout for an "
                   "LLM reader (readout.jsonl), at 600 with no disclosure / at 2,400 with "
                   "history and alternatives.")
@results_dir_option()
@library_errors
def table_command(run, fmt, read_size, results_dir) -> None:
    """Print the score table of a finished run (a run id or a run folder), re-rendered from
    its metrics.json.

    Example: factres table dev-6k-search-confidence --format latex
    """
    from resolver.results.reader import read_run
    folder = read_run(run, results_dir)
    reads = None
    if read_size:
        if folder.readout is None:
            raise InputError(f"run {folder.name} has no readout.jsonl (made before runs "
                             "recorded their read sizes, or imported)", path=str(folder.path),
                             expected="a run made by factres run since readouts were recorded")
        reads = tables.read_sizes(folder.metrics["rows"], folder.predictions, folder.readout)
    click.echo(tables.score_table(folder.meta, folder.metrics["rows"], fmt, reads), nl=False)
    for note in folder.notes:       # what the reader could not check (its data not found)
        click.echo(f"note: {escape.terminal(note)}", err=True)


@click.command("freeze")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--plans", "plans", multiple=True, metavar="SET",
              help="Plan set: live:rules, live:lexicon, an archived set id or folder; repeat "
                   "for several. Default: live:rules then live:lexicon.")
@click.option("--mode", type=click.Choice(["search", "plain"]), default="search",
              show_default=True, help="The resolver mode test runs will use.")
@click.option("--reader", metavar="SPEC", help="Reader lane test runs will use (default none).")
@click.option("--repair", metavar="SPEC", help="Repair lane test runs will use (default none).")
@library_errors
def freeze_command(config, plans, mode, reader, repair) -> None:
    """Write a frozen configuration to CONFIG (never overwritten): the plan sets (archived sets
    by the sha256 of their files, live sets by the sha256 of their compiler sources), the search
    weights, the sha256 of every file of the installed packages, the Python and dependency
    versions, the commit, mode and lanes, and its own sha256. `factres run --split test --config
    CONFIG` checks the checkout against it and names every file that differs.

    The default plan sets are the live ones, which plan any data; the archived sets of
    plans/ were compiled for the 6K dev questions, and a test run refuses a set that has plans
    for none of its questions.

    Example: factres freeze configs/test-v1.json
    """
    if not config.strip():
        # Path("") is ".", which exists: the refusal would name the wrong thing
        raise InputError("CONFIG is empty", expected="a file name for the frozen configuration")
    frozen = protocol.freeze(tuple(plans), mode, reader, repair)
    path = protocol.write_frozen(config, frozen)
    sets = ", ".join(s["spec"] for s in frozen["plan_sets"])
    click.echo(escape.terminal(f"froze {path}: plan sets {sets}; mode {frozen['mode']}; "
                               f"sha256 {frozen['sha256']}"))


def _report_input(meta: dict) -> None:
    """On stderr: input quirks handled, lines that fit no template, plan-set warnings (paths,
    lines and set names escaped for the terminal)."""
    for note in meta["notes"]:
        click.echo(f"note: {escape.terminal(note)}", err=True)
    unparsed = meta["unparsed"]
    if unparsed["count"]:
        click.echo(f"warning: {unparsed['count']} fact line(s) fit no template and were not "
                   "read (recorded in meta.json; --strict makes this an error); the first:",
                   err=True)
        for u in unparsed["first"]:
            click.echo(escape.terminal(f"  {place(u['path'], u['line'], row=u['row'])}: "
                                       f"{u['text']}  ({u['reason']})"), err=True)
    for warning in meta["warnings"]:
        click.echo(f"warning: {escape.terminal(warning)}", err=True)
