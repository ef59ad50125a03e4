"""`factres prune` and `resolver.store.prune.prune` (issue 33): a context without the facts a
higher serial of the same key supersedes in it; text that does not parse is kept as it is; the
pruned text to stdout, the counts to stderr."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import bundled_context

from oracle.cli import main
from resolver.errors import InputError
from resolver.mab import harness
from resolver.store.fact_store import FactStore, norm
from resolver.store.prune import prune
from resolver.text.facts import parse_context

ONE_PER_LINE = ("Here is a list of facts:\n"
                "0. Tim Cook is employed by Apple.\n"
                "1. The capital of France is Paris.\n"
                "2. Tim Cook is employed by Google.\n"
                "3. The capital of France is Lyon.\n"
                "4. Tim Cook is employed by IBM.\n")


def test_one_fact_per_line_keeps_the_latest_of_each_key():
    pruned = prune(ONE_PER_LINE)
    assert pruned.text == ("Here is a list of facts:\n"
                           "3. The capital of France is Lyon.\n"
                           "4. Tim Cook is employed by IBM.\n")
    assert (pruned.kept, pruned.dropped, pruned.unparsed) == (2, 3, 0)    # the header fits


def test_many_facts_on_a_line_as_harness_chunks_hold_them():
    text = ("0. Tim Cook is employed by Apple. 1. The capital of France is Paris. "
            "2. Tim Cook is employed by Google.\n3. The capital of France is Lyon.")
    assert prune(text).text == ("2. Tim Cook is employed by Google.\n"
                                "3. The capital of France is Lyon.")
    # the last fact of a line dropped takes the blank before it, not the line end
    assert prune("0. Tim Cook is employed by IBM. 1. Tim Cook is employed by Apple. "
                 "2. Tim Cook is employed by Google.\r\n").text == \
        "2. Tim Cook is employed by Google.\r\n"
    assert prune("0. Tim Cook is employed by Apple. 1. The capital of France is Paris. "
                 "2. Tim Cook is employed by Google.\n").text == \
        "1. The capital of France is Paris. 2. Tim Cook is employed by Google.\n"


def test_text_that_does_not_parse_is_kept_as_it_is():
    text = ("junk before. 0. Tim Cook is employed by Apple. 1. Tim Cook is employed by IBM.\n"
            "a line of no facts at all\n"
            "Louis. 2. The capital of France is Paris.\n"
            "\n"
            "3. The capital of France is Lyon!\n")        # no template ends in "!"
    pruned = prune(text)
    assert pruned.text == ("junk before. 1. Tim Cook is employed by IBM.\n"
                           "a line of no facts at all\n"
                           "Louis. 2. The capital of France is Paris.\n"
                           "\n"
                           "3. The capital of France is Lyon!\n")
    assert (pruned.kept, pruned.dropped, pruned.unparsed) == (2, 1, 4)


def test_a_serial_glued_to_its_fact_and_a_byte_order_mark():
    text = "\ufeff0. Tim Cook is employed by Apple. 1.Tim Cook is employed by Google."
    assert prune(text).text == "\ufeff1.Tim Cook is employed by Google."


def test_keys_are_the_stores_keys_and_serials_decide_not_positions():
    # the subject read case- and blank-insensitively; the higher serial wins wherever it stands
    text = ("5. tim  cook is employed by Google.\n"
            "2. Tim Cook is employed by Apple.\n")
    assert prune(text).text == "5. tim  cook is employed by Google.\n"
    assert prune("") == prune("") and prune("").text == ""


def test_a_pruned_context_has_the_same_frontier_one_version_per_key():
    """The same keys, values, serials and fact texts; a name spelled as the store spells it, as the
    context first writes it, which pruning may drop (verification U27: 'Safety' at 262K, the
    one case in the three contexts, as docs/readout.md says)."""
    respelled = {}
    for size in ("6k", "32k", "64k", "262k"):
        context = bundled_context(size)
        before = FactStore(parse_context(context).facts)
        pruned = prune(context)
        after = FactStore(parse_context(pruned.text).facts)
        assert [(v.key, v.value, v.serial, v.text) for _, v in after.frontier()] == \
            [(v.key, v.value, v.serial, v.text) for _, v in before.frontier()]
        for (s, v), (t, _) in zip(before.frontier(), after.frontier()):
            if s != t:
                # the store's spelling: the first fact naming it in each context
                first = next(f for f in before if norm(f.subject) == v.key[0])
                kept = next(f for f in after if norm(f.subject) == v.key[0])
                assert (s, t) == (first.subject, kept.subject)
                assert first.serial < kept.serial and first.serial not in {f.serial for f in after}
                respelled[size, v.key] = (s, t, first.serial, v.serial)
        assert after.stats()["keys_with_several_versions"] == 0
        assert pruned.kept + pruned.dropped == len(before) and pruned.unparsed == 0
        assert prune(pruned.text).text == pruned.text          # nothing more to drop
    assert respelled == {("262k", ("safety", "sport")): ("Safety", "safety", 1152, 17142)}


def test_harness_chunks_prune_alike_save_a_fact_cut_across_two_frames():
    context = bundled_context("32k")
    framed = "\n".join(harness.frame_chunk(c) for c in harness.chunk_context(context))
    whole, chunked = prune(context), prune(framed)
    # a fact cut across two frames (its serial at the end of one) is text that does not
    # parse there: kept as it is, never dropped
    cut = len(harness.chunk_context(context)) - 1         # chunk boundaries
    read = chunked.kept + chunked.dropped
    assert whole.kept + whole.dropped - cut <= read < whole.kept + whole.dropped
    assert 0 < whole.dropped - chunked.dropped <= cut
    assert FactStore(parse_context(whole.text).facts).stats()["facts"] == whole.kept


def test_a_context_that_is_not_text_is_refused():
    with pytest.raises(InputError, match="a context must be text, not bytes"):
        prune(b"0. x")


# ---- the command ----------------------------------------------------------------------------
def test_the_command_writes_the_text_to_stdout_and_the_counts_to_stderr(tmp_path):
    path = tmp_path / "context.txt"
    path.write_text(ONE_PER_LINE, "utf-8")
    result = CliRunner().invoke(main, ["prune", str(path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == prune(ONE_PER_LINE).text
    assert result.stderr == ("prune: 5 facts, 3 superseded and dropped, 2 kept; 0 piece(s) of "
                             "text that fit no template kept as they are\n")
    piped = CliRunner().invoke(main, ["prune"], input=ONE_PER_LINE.encode(),
                               catch_exceptions=False)
    assert piped.stdout == result.stdout


def test_the_command_refuses_what_it_cannot_read(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"0. Tim Cook is employed by Caf\xe9.\n")
    result = CliRunner().invoke(main, ["prune", str(bad)])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {bad}: not UTF-8: byte 0xe9 at offset 30 (expected a "
                             "UTF-8 text of numbered facts)\n")
    missing = CliRunner().invoke(main, ["prune", str(tmp_path / "none.txt")])
    assert missing.exit_code == 1
    assert missing.stderr == (f"Error: {tmp_path / 'none.txt'}: cannot read it: No such file "
                              "or directory (expected a readable text file)\n")
