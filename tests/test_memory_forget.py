"""`Memory.forget(entity)` (issue 31): append-only is not unerasable. Every version of the
entity's keys and every fact naming it go, its name goes from every text kept, the log keeps a
tombstone with counts only, and the file's raw bytes (and its -wal and -shm files) no longer hold
the name, searched case-insensitively."""
from __future__ import annotations

import re

import pytest
from test_memory import framed
from test_memory_file import assert_same_memory

from resolver.errors import ProvenanceError
from resolver.haystack import bundled_path, load
from resolver.memory.memory import Memory
from resolver.store.fact_store import FactStore

NAMES = ("Fatah", "Charles Dickens")


def raw_bytes(path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.parent.iterdir())
                    if p.name.startswith(path.name))


@pytest.fixture(scope="module")
def haystack():
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    return haystack


@pytest.mark.parametrize("entity", NAMES)
def test_forget_erases_the_entity_from_the_memory_and_the_files_bytes(haystack, entity,
                                                                      tmp_path):
    path = tmp_path / "m.db"
    chunks = framed(haystack.text, 300)
    kept = Memory()
    with Memory.open(path) as memory:
        for chunk in chunks:
            memory.ingest(chunk)
            kept.ingest(chunk)
        memory.flush()
        kept.flush()
        assert entity.lower().encode() in raw_bytes(path).lower()
        erased = memory.forget(entity)
        again = kept.forget(entity)
        assert erased.compacted
        assert (again.facts, again.operations) == (erased.facts, erased.operations)
        assert erased.facts >= 2 and erased.chunks >= 1
        for held in (path, ):
            assert entity.lower().encode() not in raw_bytes(held).lower()
        # what is left is the store of the facts that do not name it, as a run would build it
        named = re.compile(r"(?<!\w)" + re.escape(entity) + r"(?!\w)", re.IGNORECASE)
        rest = FactStore([f for f in haystack.store if not named.search(f.text)])
        assert memory.ledger.dump() == rest.ledger.dump()
        assert_same_memory(memory, kept)
        with pytest.raises(ProvenanceError, match="nothing to forget"):
            memory.forget(entity)
    assert entity.lower().encode() not in raw_bytes(path).lower()
    with Memory.open(path, readonly=True) as reopened:
        assert_same_memory(reopened, kept)
        tombstones = [e.to_json() for e in reopened.log() if e.operation is None]
        assert [t["erased"] for t in tombstones] == [
            {"facts": erased.facts, "operations": erased.operations}]


def test_the_pending_text_loses_the_name_too(tmp_path):
    path = tmp_path / "m.db"
    with Memory.open(path) as memory:
        memory.ingest("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
                      "1. The capital of France is Paris.\n2. Tim Cook is employed by Google.")
        assert memory.query("Who is Tim Cook employed by?").text == "Google"  # provisional
        erased = memory.forget("tim cook")
        assert (erased.facts, erased.operations) == (1, 1)
        assert memory.tail == "2. [erased] is employed by Google."
        assert memory.query("Who is Tim Cook employed by?").text == ""
        memory.ingest("\n")            # the fact goes on: about no one now
        assert [f.subject for f in memory.store] == ["France", "[erased]"]
    assert b"tim cook" not in raw_bytes(path).lower()
