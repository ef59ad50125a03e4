"""`factres plans ...`: compile, derive, list, verify and show archived plan sets."""
from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import replace

import click

import resolver.escape as escape
from resolver.cli.options import Seconds, data_option, library_errors
from resolver.errors import clip


def _dataset(data: tuple[str, ...]):
    from resolver.haystack import bundled_path, load

    dataset, _gold = load(list(data) or [bundled_path()])   # gold is never used here
    return dataset


@click.group("plans")
def plans_group() -> None:
    """Compile questions into plan sets and keep them in the archive (plans/<set-id>/).

    Sets live in the repo's plans/ folder, or in $FACTRES_PLANS when set. A set is written once
    and checked against its SHA256SUMS whenever it is read.

    Example: factres plans list
    """


@plans_group.command("compile")
@click.option("--planner", required=True, metavar="rules|lexicon|ollama:MODEL",
              help="Who compiles: the rule or lexicon compiler, or a local Ollama model.")
@click.option("--set-id", required=True, help="Id of the new set: lower-case letters, digits, '.', '_' and '-', "
                   "starting with a letter or digit.")
@click.option("--temperature", type=click.FloatRange(0.0, 2.0), default=0.0, show_default=True,
              help="Sampling temperature of the model: 0 for repeatable plans, e.g. 0.7 "
              "for varied ones.")
@click.option("--level", type=click.Choice(["relation", "family"]), default="relation",
              show_default=True, help="Ask the model for relations or for relation families.")
@click.option("--host", default=None, metavar="URL",
              help="Ollama server. Default: $OLLAMA_HOST, else http://127.0.0.1:11434.")
@click.option("--timeout", type=Seconds(), default=60.0, show_default=True,
              metavar="S", help="Seconds to wait for one reply (a cold model load counts).")
@click.option("--stream", is_flag=True, help="Ask the model to stream its replies.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: when stderr is a terminal).")
@data_option()
@library_errors
def compile_command(planner: str, set_id: str, temperature: float, level: str, host: str | None,
                    timeout: float, stream: bool, progress: bool | None,
                    data: tuple[str, ...]) -> None:
    """Compile every question into plans and archive them as a new plan set.

    With ollama:MODEL, one /api/chat request per question; the model sees the question and the
    entity names it mentions, never a fact. A reply that fails validation, or a failed call,
    falls back to the lexicon plan for that question and the manifest counts why. A host that
    is down, hangs or lacks the model stops the command before the first question; if every
    call fails, nothing is archived. The example needs a running Ollama server (ollama serve)
    with the model pulled (ollama pull qwen2.5:7b-instruct).

    Example: factres plans compile --planner ollama:qwen2.5:7b-instruct --set-id qwen7b-t0
    """
    from resolver.models.compile_ollama import compile_plan_set
    from resolver.plan.archive import check_writable, write_plan_set

    check_writable(set_id)       # fail before spending any model calls
    dataset = _dataset(data)
    if progress is None:
        progress = sys.stderr.isatty()
    with click.progressbar(length=len(dataset.questions), label=f"compiling with {planner}",
                           file=sys.stderr) if progress else nullcontext() as bar:
        plan_set = compile_plan_set(dataset, planner, set_id, temperature=temperature,
                                    level=level, host=host, timeout=timeout, stream=stream,
                                    progress=bar.update if progress else None)
    m = plan_set.manifest
    if m.get("all_failed"):
        raise click.ClickException(
            f"EVERY MODEL CALL FAILED ({m['fallback_count']} of {m['count']}): nothing "
            f"archived, since the set would hold only lexicon fallback plans under {planner}'s "
            f"name. First failure: {next(iter(m['fallback_qids'].values()), '?')}")
    path = write_plan_set(plan_set)
    with_plans = sum(1 for c in plan_set.plans.values() if c.plans)
    click.echo(f"wrote {path}: {m['count']} questions, {with_plans} with plans "
               f"(planner {planner}, level {level})")
    if m.get("model"):
        reasons = ", ".join(f"{k} {v}" for k, v in m["fallbacks"].items()) or "none"
        click.echo(f"model calls ok: {m['calls_ok']}; fallbacks to lexicon: "
                   f"{m['fallback_count']} ({reasons})")


@plans_group.command("derive")
@click.argument("source")
@click.option("--order", type=click.Choice(["all"]), default="all", show_default=True,
              help="Which orders of each plan's relations to keep.")
@click.option("--set-id", required=True, help="Id of the new, derived set.")
@library_errors
def derive_command(source: str, order: str, set_id: str) -> None:
    """Derive a new set from an archived one: every plan in every order of its relations.

    Example: factres plans derive lexicon-6k --order all --set-id my-lexicon-orders
    """
    from resolver.plan.archive import derive_plan_set, load_plan_set, write_plan_set

    derived = derive_plan_set(load_plan_set(source), set_id, order)
    path = write_plan_set(derived)
    total = sum(len(c.plans) for c in derived.plans.values())
    click.echo(f"wrote {path}: {len(derived.plans)} questions, {total} plans "
               f"(every order of {source})")


@plans_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the summaries as JSON.")
@library_errors
def list_command(as_json: bool) -> None:
    """List the archived plan sets with their planner, size and checksum status.

    Example: factres plans list
    """
    import orjson

    from resolver.plan.archive import list_plan_sets, plans_root

    sets = list_plan_sets()
    if as_json:
        click.echo(orjson.dumps(sets, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
        return
    if not sets:
        click.echo(f"no plan sets in {plans_root()}")
        return
    rows = [("set", "planner", "level", "temp", "questions", "fallbacks", "status")]
    def shown(value) -> str:
        return "-" if value is None else str(value)

    for s in sets:
        if not s["set"]:
            status = "not a plan set (no manifest.json)"
        elif s["ok"]:
            status = "ok"
        else:
            # sums that match over lines that fail are not a checksum mismatch
            status = "CHECKSUM MISMATCH" if not s["checksums"] else "INVALID (plans verify)"
        if s["all_failed"]:
            status += ", ALL MODEL CALLS FAILED"
        rows.append((escape.terminal(s["set_id"]), shown(s["planner"]), shown(s["level"]),
                     "-" if s["temperature"] is None else f"{s['temperature']:g}",
                     shown(s["count"]), shown(s["fallback_count"]), status))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


@plans_group.command("verify")
@click.argument("set_id", required=False)
@library_errors
def verify_command(set_id: str | None) -> None:
    """Check a set (or every set) against its SHA256SUMS; exit 1 on any mismatch.

    Example: factres plans verify lexicon-6k
    """
    from resolver.plan.archive import list_plan_sets, verify_plan_set

    ids = [set_id] if set_id else [s["set_id"] for s in list_plan_sets()]
    bad = 0
    for sid in ids:
        problems = verify_plan_set(sid)
        if problems:
            bad += 1
            for problem in problems:
                click.echo(f"FAILED {sid}: {problem}")
        else:
            click.echo(f"ok {sid}")
    if bad:
        raise click.ClickException(f"{bad} of {len(ids)} plan set(s) failed verification")


@plans_group.command("show")
@click.argument("set_id")
@click.option("--qid", default=None, help="Show only this question.")
@library_errors
def show_command(set_id: str, qid: str | None) -> None:
    """Show the plans of an archived set, question by question.

    Example: factres plans show lexicon-6k --qid factconsolidation_mh_6k_no0
    """
    from resolver.plan.archive import load_plan_set

    plan_set = load_plan_set(set_id)
    if qid is not None and qid not in plan_set.plans:
        raise click.ClickException(f"no question {qid!r} in plan set {set_id!r}")
    for q, compiled in plan_set.plans.items():
        if qid is not None and q != qid:
            continue
        # plans name the haystack's entities and a model's notes: escaped for the terminal,
        # and each value cut to 200 characters (as `parse` cuts an unparsed line; `plans
        # verify` reads them whole)
        if not compiled.plans:
            click.echo(escape.terminal(f"{clip(q)}: no plan ({clip(compiled.reason)})"))
        for plan in compiled.plans:
            extra = f"  [{clip(plan.note)}]" if plan.note else ""
            shown = replace(plan, entity=clip(plan.entity))
            click.echo(escape.terminal(f"{clip(q)}: {shown.describe()}  "
                                       f"({clip(plan.compiler)}){extra}"))
