"""`factres tables`: the paper tables (and figures) from run and oracle folders."""
from __future__ import annotations

import click

import resolver.escape as escape
from resolver.cli.options import OutFolder, library_errors, results_dir_option
from resolver.report import paper_tables


@click.command("tables")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@click.option("--format", "fmt", type=click.Choice(["md", "latex", "both"]), default="both",
              show_default=True, help="Markdown, LaTeX (booktabs tabular for \\input{}), or both.")
@click.option("--out", type=OutFolder(),
              help="Folder for the tables (regenerated files are replaced). Default: "
                   "<results dir>/tables/.")
@click.option("--table", "names", multiple=True, type=click.Choice(paper_tables.TABLES),
              help="Build only this table; repeatable. A table asked for by name must have "
                   "input, else it is an error.")
@results_dir_option("Where run and oracle folders are")
@click.option("--references", type=click.Path(dir_okay=False),
              help="References file for mab-ref and --with-references. Default: "
                   "resolver/data/references.json.")
@click.option("--plot", is_flag=True,
              help="Also write PNG figures (needs the plot extra: pip install 'factres[plot]').")
@click.option("--baseline", metavar="RUN",
              help="Mark each mab-fc EM cell that differs significantly from this run (a run id "
                   "or folder, scored): ↑ above, ↓ below, by the exact McNemar test (p below "
                   "0.05) on the questions both runs have; the footnotes name the test and the "
                   "baseline.")
@click.option("--with-references", is_flag=True,
              help="Add the published reference rows (--references) to mab-fc, in a group of "
                   "their own below the runs, each naming its source.")
@click.option("--columns", "columns", multiple=True, metavar="LIST",
              help="mab-fc's columns beside the system and its EM cells, comma-separated: "
                   f"{', '.join(paper_tables.FC_COLUMN_NAMES)}. Default: none (each run's "
                   "values are in a footnote).")
@click.option("--label", "labels", multiple=True, metavar="RUN=TEXT",
              help="Name RUN's row TEXT in mab-fc; repeatable. Default: the run's label "
                   "(factres run --name), an imported system's name, else factres <mode>.")
@library_errors
def tables_command(runs, fmt, out, names, results_dir, references, plot, baseline,
                   with_references, columns, labels) -> None:
    """Write the paper tables mab-fc, mab-nbest, mab-ceiling and mab-ref from folders only.

    RUN is a run id under the results dir or a folder path; its kind is read from its files
    (meta.json + metrics.json: a score run; nbest.json or ceiling.json: an oracle folder).
    Without RUN, every such folder under the results dir is read; one that cannot be read is
    skipped with a warning on stderr naming it and why (a folder another tool wrote, with a
    note). A table with no input folder is skipped with a note on stderr. --baseline marks the
    mab-fc cells whose paired difference from a run is significant; --with-references adds the
    published figures to mab-fc, set apart from the runs factres scored.

    mab-fc shows each run's label and its EM at the sizes some run has (the means beside
    several sizes); its plan sets, mode, reader, split and commit are in a footnote, or in
    columns with --columns. The LaTeX files are floats to \\input{} where the table goes:
    table (one column of a two-column paper) when it fits there, else table*; laid out to
    fit the page: text columns wrap (in smaller type, or scaled as a last resort) when too
    wide, and a table taller than a page is a longtable (docs/tables.md).
    With --plot: mab-fc.png and .pdf, the main result, and the n-best and ceiling figures.

    Example: factres tables dev-6k-search-confidence dev-6k-plain-confidence
    oracle-nbest-dev-6k-search-reading oracle-ceiling-6k-2
    """
    formats = ("md", "latex") if fmt == "both" else (fmt,)
    report = paper_tables.make_tables(tuple(runs), results=results_dir, out=out,
                                      formats=formats, names=tuple(names),
                                      references=references, plot=plot, baseline=baseline,
                                      with_references=with_references, columns=columns,
                                      labels=labels)
    # one line each: a line break inside (a folder's name, a skipped folder's error) is shown
    for warning in report.warnings:
        click.echo(f"warning: {escape.terminal(warning)}", err=True)
    for note in report.notes:
        click.echo(f"note: {escape.terminal(note)}", err=True)
    for path in report.written:
        click.echo(f"wrote {escape.terminal(str(path))}")
