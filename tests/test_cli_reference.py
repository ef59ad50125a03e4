"""The built CLI reference page (docs/cli.md through mkdocs-click) shows what `-h` shows: no
`Sentinel.UNSET` default, and every placeholder of the help (`<results>`, `<run-id>`, ...)
visible on the page, not swallowed by the browser as an unknown HTML tag; and no other page of
the built site hides one either. Runs where MkDocs is
installed (the docs extra; CI installs it before the tests)."""
from __future__ import annotations

import html.parser
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from resolver.cli.reference import for_docs, help_markdown, shown_default

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"<[A-Za-z][^<>\n]*>")
# Every element a MkDocs Material page is made of; a tag outside this set is a placeholder
# the page turned into markup.
HTML_TAGS = set("""a abbr article aside b blockquote body br button code dd details div dl dt em
figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hr html i img input kbd label li
link main meta nav ol p path pre script section small span strong style sub summary sup svg
table tbody td th thead title tr ul""".split())


def all_commands(command, ctx=None):
    ctx = click.Context(command, info_name=command.name, parent=ctx)
    yield command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            yield from all_commands(command.get_command(ctx, name), ctx)


class PageText(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self._skip = set(), [], 0

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocs_click")
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d",
                           str(site)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    return site


def read(html_file: Path) -> PageText:
    parser = PageText()
    parser.feed(html_file.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def page(site):
    return read(site / "cli" / "index.html")


def test_no_sentinel_default(page):
    assert "Sentinel" not in "".join(page.text)
    assert "UNSET" not in "".join(page.text)


def test_no_placeholder_becomes_a_tag(page):
    assert page.tags <= HTML_TAGS, sorted(page.tags - HTML_TAGS)


def test_no_page_of_the_site_hides_a_placeholder(site):
    """Verification U29: a placeholder written outside a code span ("factres <mode>" in a
    docstring, "<serial>. " in a guide page) became a tag the browser hides."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    hidden = {str(p.relative_to(site)): sorted(read(p).tags - HTML_TAGS) for p in pages}
    assert {p: tags for p, tags in hidden.items() if tags} == {}
    shown = {name: " ".join(read(site / name / "index.html").text)
             for name in ("api", "parsing")}
    assert '"factres <mode>"' in shown["api"]
    assert '"<serial>. "' in shown["parsing"]


def test_every_placeholder_of_the_help_is_on_the_page(page):
    from oracle.cli import main
    text = " ".join(" ".join(page.text).split())
    wanted = set()
    for command, _ in all_commands(main):
        helps = [command.help or ""] + [p.help or "" for p in command.params
                                        if isinstance(p, click.Option)]
        for h in helps:
            wanted |= set(PLACEHOLDER.findall(h))
    assert {"<results>", "<run-id>", "<command>", "<tag>"} <= wanted
    assert sorted(p for p in wanted if p not in text) == []


def test_reference_tree_keeps_real_defaults():
    from oracle.cli import main
    shown = for_docs(main)
    run = shown.commands["run"]
    defaults = {p.opts[-1].lstrip("-").replace("-", "_"): p.default for p in run.params
                if isinstance(p, click.Option)}
    assert defaults["split"] == "dev"
    assert defaults["data"] is None and defaults["run_id"] is None
    assert defaults["help"] is False
    assert all(type(p.default).__name__ != "Sentinel" for c, _ in all_commands(shown)
               for p in c.params if isinstance(p, click.Option))
    # the commands themselves are left as they are
    original = main.get_command(click.Context(main), "run")
    assert [p.help for p in original.params] != [p.help for p in run.params]
    assert "<results>" in original.help and "<results>" not in run.help


def test_help_markdown_escapes_outside_code_spans_only():
    assert help_markdown("in <results>/<run-id>/ and `<kept>` & *x* | y") == \
        "in &lt;results&gt;/&lt;run-id&gt;/ and `<kept>` &amp; \\*x\\* &#124; y"
    assert help_markdown(None) is None


def test_shown_default_of_an_option_without_one():
    option = click.Option(["--x"])
    assert shown_default(option, click.Context(click.Command("c"))) is None
    assert shown_default(click.Option(["--y"], default=3),
                         click.Context(click.Command("c"))) == 3
