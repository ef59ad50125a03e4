"""The command tree as the CLI reference page shows it (docs/cli.md, rendered by mkdocs-click).

mkdocs-click writes a command's help and each option's help into the page as Markdown, and an
option's `default` as it is. The help is written for a terminal, where `<results>/<run-id>/`
is plain text; in Markdown a `<results>` is an HTML tag the browser hides. And click (8.2 on)
leaves an option without a default at its `UNSET` sentinel, which the page would print as
`Sentinel.UNSET`. `for_docs` gives mkdocs-click a copy of the tree with both put right: the help
escaped for Markdown (outside its code spans, where Markdown escapes by itself) and each
option's default the value click would use, or none. The commands themselves are untouched."""
from __future__ import annotations

import copy
import re

import click

# A code span (`...`) is kept as written: Markdown shows its text literally. Outside one, the
# characters Markdown or HTML would act on are escaped.
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.S)
_OUTSIDE = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "*": r"\*", "|": "&#124;"}
_SPECIAL = re.compile("[" + re.escape("".join(_OUTSIDE)) + "]")


def help_markdown(text: str | None) -> str | None:
    """Help text for a terminal, as Markdown that shows the same characters: `<`, `>`, `&`,
    `*` and `|` escaped outside code spans (a `|` would end a cell of the options table)."""
    if text is None:
        return None
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_SPECIAL.sub(lambda m: _OUTSIDE[m[0]], text[last:span.start()]))
        out.append(span[0])
        last = span.end()
    out.append(_SPECIAL.sub(lambda m: _OUTSIDE[m[0]], text[last:]))
    return "".join(out)


def shown_default(option: click.Option, ctx: click.Context):
    """The default click uses for `option` when it is not given (None when it has none: an
    option whose help says what applies then, `$FACTRES_RESULTS` or another option's value)."""
    value = option.get_default(ctx, call=False)
    if callable(value) or type(value).__name__ == "Sentinel" or value in ((), []):
        return None
    return value


def _option(option: click.Option, ctx: click.Context) -> click.Option:
    shown = copy.copy(option)
    shown.help = help_markdown(option.help)
    shown.default = shown_default(option, ctx)
    return shown


def for_docs(command: click.Command, parent: click.Context | None = None) -> click.Command:
    """A copy of `command` (and of every subcommand, lazy ones loaded) for the reference page:
    help escaped for Markdown (`help_markdown`), defaults as click applies them
    (`shown_default`)."""
    ctx = click.Context(command, info_name=command.name, parent=parent,
                        **command.context_settings)
    shown = copy.copy(command)
    shown.help = help_markdown(command.help)
    # the list of subcommands shows a summary's first line: the whole first sentence instead
    shown.short_help = help_markdown(command.get_short_help_str(limit=1000))
    shown.params = [_option(p, ctx) if isinstance(p, click.Option) else p
                    for p in command.params]
    # -h/--help is made by click as the page is written (`get_params`): its copy joins the
    # options instead
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        shown.params.append(_option(help_option, ctx))
        shown.add_help_option = False
    if isinstance(command, click.Group):
        names = command.list_commands(ctx)
        # a plain group holding the copies: mkdocs-click reads `commands`, and a lazy group's
        # own map would load the originals again
        group = click.Group(name=command.name, help=shown.help, params=shown.params,
                            short_help=shown.short_help, add_help_option=False,
                            context_settings=command.context_settings)
        for name in names:
            group.add_command(for_docs(command.get_command(ctx, name), ctx), name)
        return group
    return shown


__all__ = ["for_docs", "help_markdown", "shown_default"]
