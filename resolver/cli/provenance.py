"""`factres history` and `factres frontier`: the provenance ledger of one haystack."""
from __future__ import annotations

import click
import orjson

import resolver.escape as escape
from resolver.cli.options import library_errors
from resolver.errors import InputError
from resolver.store.provenance import Version

_JSON = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2


def relation_option(func):
    return click.option("--relation", "relation", default=None, metavar="R",
                        help="Only this relation (canonical name, e.g. capital).")(func)


def _data_option(func):
    return click.option("--data", type=click.Path(dir_okay=False), default=None,
                        help="Haystack file with one context (.json, .jsonl, .parquet or "
                             ".txt). Default: the bundled 6K dev rows.")(func)


def _store(data: str | None):
    from resolver.haystack import bundled_path, load

    path = data or str(bundled_path())
    dataset, _gold = load([path])            # gold is never read here
    if len(dataset.haystacks) != 1:
        raise InputError(f"{len(dataset.haystacks)} distinct contexts; history and frontier "
                         "read one", path=path, expected="a file whose rows share one context")
    return next(iter(dataset.haystacks.values())).store


@click.command("history")
@click.argument("entity")
@relation_option
@_data_option
@click.option("--json", "as_json", is_flag=True, help="Print versions and edges as JSON.")
@library_errors
def history_command(entity: str, relation: str | None, data: str | None,
                    as_json: bool) -> None:
    """Print every version of an entity's keys: serial, line, status, value and the evidence
    line, oldest first.

    ENTITY is matched as the store matches names (case and spacing ignored). Statuses:
    active (the current value), superseded (replaced by a later fact), contested,
    contradicted, revoked (see the docs: Concepts, the provenance ledger).

    Example: factres history australia --relation capital
    """
    echo_history(_store(data), entity, relation, as_json)


def echo_history(store, entity: str, relation: str | None, as_json: bool) -> None:
    """Print the history of an entity's keys in `store` (a FactStore), as text or JSON: what
    `factres history` and `factres memory history` print."""
    found = store.history(entity, relation)
    subject = store.spelling(entity)
    if as_json:
        keys = [{"subject": subject, "relation": rel, "versions": [v.to_json() for v in vs],
                 "edges": [e.to_json() for e in store.ledger.edges(vs[0].key)]}
                for rel, vs in found.items()]
        click.echo(orjson.dumps({"entity": subject, "keys": keys}, option=_JSON).decode())
        return
    click.echo("\n\n".join(_history_text(subject, rel, vs) for rel, vs in found.items()))


def _history_text(subject: str, relation: str, versions: tuple[Version, ...]) -> str:
    heads = [v for v in versions if v.status in ("active", "contested") and not v.tombstone]
    head = f"{heads[0].value} ({heads[0].status})" if heads else "none (every version revoked)"
    if len(heads) > 1:
        head += f", {len(heads) - 1} open alternative(s)"
    rows = [("serial", "line", "status", "value", "evidence")]
    # names, values and fact lines are the haystack's: escaped for the terminal
    rows += [(str(v.serial), str(v.line), v.status,
              "(retraction)" if v.tombstone else escape.terminal(v.value),
              escape.terminal(v.text)) for v in versions]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"{escape.terminal(subject)} / {relation}: {len(versions)} version(s), head: "
             f"{escape.terminal(head)}"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[4]
              for r in rows]
    return "\n".join(lines)


@click.command("frontier")
@relation_option
@_data_option
@click.option("--json", "as_json", is_flag=True, help="Print the frontier as JSON.")
@library_errors
def frontier_command(relation: str | None, data: str | None, as_json: bool) -> None:
    """Print the current value of every key (the active frontier), one per line, tab-separated:
    subject, relation, value, status, serial, line. Sorted by subject, then relation.

    FactConsolidation writes every fact with accept in serial order, so the frontier is the
    latest fact of each (subject, relation). --json adds the evidence text, the support count
    and any open alternatives.

    Example: factres frontier --relation capital
    """
    echo_frontier(_store(data), relation, as_json)


def echo_frontier(store, relation: str | None, as_json: bool) -> None:
    """Print the frontier of `store` (a FactStore), as tab-separated text or JSON: what
    `factres frontier` and `factres memory frontier` print."""
    rows = store.frontier(relation)
    if as_json:
        out = [{"subject": subject, "relation": head.key[1], "value": head.value,
                "status": head.status, "serial": head.serial, "line": head.line,
                "text": head.text, "support": head.support,
                "alternatives": [a.to_json() for a in store.ledger.alternatives(head.key)]}
               for subject, head in rows]
        click.echo(orjson.dumps(out, option=_JSON).decode())
        return
    lines = ["subject\trelation\tvalue\tstatus\tserial\tline"]
    # a tab or a line break in a name is escaped too: the columns stay the columns
    lines += [f"{escape.terminal(subject)}\t{head.key[1]}\t{escape.terminal(head.value)}\t"
              f"{head.status}\t{head.serial}\t{head.line}" for subject, head in rows]
    click.echo("\n".join(lines))
