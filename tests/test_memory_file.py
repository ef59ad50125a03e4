"""A memory kept in a file (issue 31): `Memory.open(path)` reopened is the same memory: it reads
on from where the text stopped, its ledger dumps byte for byte as before closing (the provisional
tail included), and every answer and trace is the run's and a memory's never closed, on whole
contexts and on harness chunks, closed and reopened between chunks at many points. Plus readers,
the writer lock, copies refused, and every bad file refused with nothing written."""
from __future__ import annotations

import copy
import os
import pickle
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from conftest import bundled_context
from hypothesis import given
from hypothesis import strategies as st
from test_memory import CUTS, assert_answers_as_the_run, cut, dev, framed  # noqa: F401

from resolver.errors import MemoryFileError, MemoryLockedError
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.store.memory_file import SCHEMA_VERSION
from resolver.store.provenance import Evidence

ROOT = Path(__file__).resolve().parents[1]
HEAD = "Here is a list of facts:\n"
ASK = "Who is Tim Cook employed by?"


def assert_same_memory(reopened: Memory, kept: Memory) -> None:
    """The same memory: the ledger as each presents it, the store, and the reader's state."""
    assert reopened.ledger.dump() == kept.ledger.dump()
    assert list(reopened.store) == list(kept.store)
    assert reopened._reader.state() == kept._reader.state()
    assert (reopened._held, reopened._provisional, reopened.tail) == \
        (kept._held, kept._provisional, kept.tail)


# ---- the same memory, reopened --------------------------------------------------------------
def test_dev_context_in_harness_chunks_reopened_between_every_chunk_answers_as_the_run(
        dev, tmp_path):
    dataset, haystack, traces, rows = dev
    chunks = framed(haystack.text, 200)
    assert len(chunks) > 10
    path = tmp_path / "dev.db"
    kept = Memory()
    for i, chunk in enumerate(chunks):
        with Memory.open(path) as memory:
            assert_same_memory(memory, kept)
            memory.ingest(chunk)
            kept.ingest(chunk)
            if i % 3 == 0:                     # a query between chunks reads the tail
                assert memory.query(ASK).to_json() == kept.query(ASK).to_json()
    with Memory.open(path) as memory:
        assert_same_memory(memory, kept)
        assert_answers_as_the_run(memory, dataset, traces, rows)
        memory.flush()
    with Memory.open(path, readonly=True) as memory:
        assert memory.ledger.dump() == haystack.store.ledger.dump()
        assert list(memory.store) == list(haystack.store)


def test_a_memory_reopened_in_a_new_process_answers_as_the_run(dev, tmp_path):
    """What a user does: feed a file in one process, open it in another, ask."""
    dataset, haystack, traces, rows = dev
    path = tmp_path / "dev.db"
    chunks = tmp_path / "chunks.json"
    chunks.write_bytes(orjson.dumps(framed(haystack.text, 300)))
    feed = textwrap.dedent(f"""
        import orjson
        from resolver.memory.memory import Memory
        with Memory.open({str(path)!r}) as memory:
            for chunk in orjson.loads(open({str(chunks)!r}, "rb").read()):
                memory.ingest(chunk)
    """)
    subprocess.run([sys.executable, "-c", feed], check=True, cwd=ROOT)
    with Memory.open(path, readonly=True) as memory:
        assert_answers_as_the_run(memory, dataset, traces, rows)
        assert memory.ledger.dump() == haystack.store.ledger.dump()


@pytest.mark.parametrize("tokens,frame", [(64, True), (37, False), (4096, True)])
def test_32k_in_harness_chunks_closed_and_reopened_at_many_points(tokens, frame, tmp_path):
    context = bundled_context("32k")
    chunks = harness.chunk_context(context, tokens)
    if frame:
        chunks = [harness.frame_chunk(c) for c in chunks]
    path = tmp_path / "32k.db"
    kept = Memory()
    memory = Memory.open(path)
    step = max(1, len(chunks) // 25)            # 25 or so reopenings
    for i, chunk in enumerate(chunks):
        memory.ingest(chunk)
        kept.ingest(chunk)
        if i % step == 0:
            if i % (2 * step) == 0:
                assert memory.query(ASK).to_json() == kept.query(ASK).to_json()
            memory.close()
            memory = Memory.open(path)
            assert_same_memory(memory, kept)
    memory.flush()
    kept.flush()
    memory.close()
    with Memory.open(path, readonly=True) as memory:
        assert_same_memory(memory, kept)


@CUTS
@given(positions=st.lists(st.integers(min_value=0, max_value=10**7), max_size=30),
       asks=st.lists(st.booleans(), min_size=31, max_size=31))
def test_raw_text_cut_anywhere_reopened_at_each_cut(tmp_path_factory, positions, asks):
    text = bundled_context("6k")
    path = tmp_path_factory.mktemp("cuts") / "m.db"
    kept = Memory()
    for piece, ask in zip(cut(text, positions), asks):
        with Memory.open(path) as memory:
            memory.ingest(piece)
            kept.ingest(piece)
            if ask:
                memory.query(ASK)
                kept.query(ASK)
        with Memory.open(path) as memory:
            assert_same_memory(memory, kept)


def test_the_provisional_tail_and_a_ledger_operation_after_it_are_kept_in_order(tmp_path):
    path = tmp_path / "m.db"
    kept = Memory()
    with Memory.open(path) as memory:
        for m in (memory, kept):
            m.ingest(HEAD + "0. The capital of France is Paris.\n1. The capital of France is "
                     "Lyon.\n2. Joe Biden was born in the city of St.")
            assert m.query("Which city was Joe Biden born in?").text == "St"   # provisional
            m.ledger.revoke(("france", "capital"), Evidence(3, 5, "3. Lyon was an error."))
    # close wrote the revoke and the view; reopened, the provisional fact is before the revoke
    with Memory.open(path) as memory:
        assert_same_memory(memory, kept)
        assert [o.op for o in memory.ledger.operations()] == ["accept"] * 3 + ["revoke"]
        for m in (memory, kept):
            m.ingest(" Louis.\n")
            assert m.query("What is the capital of France?").text == "Paris"
        assert_same_memory(memory, kept)
    with Memory.open(path, readonly=True) as memory:
        assert_same_memory(memory, kept)
        assert memory.query("Which city was Joe Biden born in?").text == "St. Louis"


def test_bytes_cut_inside_a_character_across_a_reopening(tmp_path):
    path = tmp_path / "m.db"
    data = (HEAD + "0. Tim Cook is employed by Nestlé.\n").encode()
    split = data.index("é".encode()) + 1
    with Memory.open(path) as memory:
        memory.ingest(data[:split])
    with Memory.open(path) as memory:
        assert memory._held == data[split - 1:split]
        memory.ingest(data[split:])
        assert memory.query(ASK).text == "Nestlé"
    rows = sqlite3.connect(path).execute("SELECT kind, body FROM chunks ORDER BY arrival")
    assert [(k, b) for k, b in rows] == [("bytes", data[:split]), ("bytes", data[split:])]


@pytest.mark.parametrize("as_bytes", [False, True])
def test_a_long_pending_text_is_read_again_from_its_chunks_not_written_with_each(as_bytes,
                                                                                 tmp_path):
    """Text with no fact start stays pending: past TAIL_LIMIT characters a commit stores where
    to read it again from, and the reopened memory is the same."""
    from resolver.memory.reader_state import TAIL_LIMIT

    path = tmp_path / "m.db"
    junk = "Chat with no facts in it, naming Zoë now and then. " * 40
    pieces = [HEAD + "0. Tim Cook is employed by Apple.\n"] + [junk] * 80 + \
        ["\n1. Tim Cook is employed by Google.\n"]
    assert len(junk) * 80 > 2 * TAIL_LIMIT
    kept = Memory()
    for i, piece in enumerate(pieces):
        data = piece.encode() if as_bytes else piece
        if as_bytes and i % 2:                        # cut inside a character, sometimes
            data = data[:len(data) // 2 + 1], data[len(data) // 2 + 1:]
        else:
            data = (data,)
        with Memory.open(path) as memory:
            for part in data:
                memory.ingest(part)
                kept.ingest(part)
            memory.query(ASK)
            kept.query(ASK)
        if i % 9 == 0 or i == len(pieces) - 1:
            with Memory.open(path, readonly=True) as reopened:
                assert_same_memory(reopened, kept)
    stored = orjson.loads(sqlite3.connect(path).execute("SELECT memory FROM state").fetchone()[0])
    assert "replay" not in stored                       # the fact cut the pending text
    with Memory.open(path) as memory:
        assert memory.query(ASK).text == "Google"
        memory.ingest(junk * 40)                       # pending again, past the limit
    stored = orjson.loads(sqlite3.connect(path).execute("SELECT memory FROM state").fetchone()[0])
    assert "_pending" not in stored["reader"] and len(stored["replay"]["reader"]["_pending"]) \
        <= TAIL_LIMIT


# ---- readers, the writer lock ---------------------------------------------------------------
def test_a_reader_sees_each_new_commit_and_never_writes(tmp_path):
    path = tmp_path / "m.db"
    writer = Memory.open(path)
    reader = Memory.open(path, readonly=True)            # no lock taken: both are open
    assert reader.query(ASK).reason.startswith("nothing ingested")
    writer.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
    assert reader.query(ASK).text == "Apple"
    writer.ingest("1. Tim Cook is employed by Google.\n")
    assert reader.query(ASK).text == "Google"
    for write in (lambda: reader.ingest("2. x"), reader.flush, reader.reset):
        with pytest.raises(MemoryFileError, match="is open read-only"):
            write()
    writer.close()
    assert reader.query(ASK).text == "Google"
    reader.close()


def test_a_second_writer_waits_then_is_refused_naming_the_holders_pid(tmp_path):
    path = tmp_path / "m.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from resolver.memory.memory import Memory; "
         f"m = Memory.open({str(path)!r}); print('open', flush=True); sys.stdin.read()"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(MemoryLockedError) as refused:
            Memory.open(path, timeout=0.3)
        assert refused.value.pid == holder.pid
        assert str(refused.value) == (
            f"{path}: is open for writing by process {holder.pid} (waited 0.3 s) (expected that "
            "writer to close it, or readonly=True (the read-only commands of factres memory "
            "never wait))")
        with Memory.open(path, readonly=True) as reader:       # readers never wait
            assert len(reader.store) == 0
        holder.kill()                                           # SIGKILL: no stale lock
        holder.wait()
        with Memory.open(path, timeout=0.3) as memory:
            memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
    finally:
        holder.kill()
        holder.wait()


def test_the_same_process_cannot_open_two_writers_either(tmp_path):
    path = tmp_path / "m.db"
    with Memory.open(path):
        with pytest.raises(MemoryLockedError, match=f"process {os.getpid()}"):
            Memory.open(path, timeout=0)
    Memory.open(path, timeout=0).close()                    # closed: the lock is free


# ---- what a file-backed memory refuses ------------------------------------------------------
def test_reset_copy_and_pickle_are_refused_for_a_memory_in_a_file(tmp_path):
    path = tmp_path / "m.db"
    with Memory.open(path) as memory:
        memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
        with pytest.raises(MemoryFileError, match=r"reset\(\) is refused"):
            memory.reset()
        for clone in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(MemoryFileError, match="cannot be copied or pickled") as refused:
                clone(memory)
            assert "Memory.open(path) again" in str(refused.value)
        assert memory.query(ASK).text == "Apple"
    with pytest.raises(MemoryFileError, match="the memory is closed"):
        memory.query(ASK)
    memory.close()                                           # idempotent


def test_a_closed_in_process_memory_refuses_use_and_the_context_manager_closes():
    with Memory() as memory:
        memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
        assert memory.path is None and not memory.readonly
    with pytest.raises(MemoryFileError, match=r"the memory is closed \(expected a new Memory"):
        memory.ingest("1. x")


# ---- bad files: one line naming the path and what to do, nothing written ---------------------
def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _sqlite_file(path: Path, setup: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(setup)
    conn.close()


@pytest.mark.parametrize("case", ["not sqlite", "empty", "other sqlite", "newer schema",
                                  "truncated", "folder"])
@pytest.mark.parametrize("readonly", [False, True])
def test_a_bad_file_is_refused_in_one_line_and_nothing_is_written(case, readonly, tmp_path):
    path = tmp_path / "m.db"
    if case == "not sqlite":
        path.write_text("0. Tim Cook is employed by Apple.\n" * 10)
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "other sqlite":
        _sqlite_file(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);")
    elif case == "newer schema":
        with Memory.open(path) as memory:
            memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
        _sqlite_file(path, f"PRAGMA user_version = {SCHEMA_VERSION + 1};")
    elif case == "truncated":
        with Memory.open(path) as memory:
            memory.ingest(bundled_context("6k"))
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    else:
        path.mkdir()
    before = _listing(tmp_path) if case != "folder" else {}
    expected = {
        "not sqlite": "is not an SQLite file, so not a factres memory (expected a memory file "
                      "made by Memory.open or factres memory)",
        "empty": "is empty, not a factres memory (expected a memory file, or a path where no "
                 "file is yet)",
        "other sqlite": "is an SQLite file but not a factres memory (application id 0) "
                        "(expected a memory file made by Memory.open or factres memory; "
                        "factres never writes into another database)",
        "newer schema": f"was written by a newer factres (memory schema version "
                        f"{SCHEMA_VERSION + 1}; factres",
        "truncated": "is truncated: ",
        "folder": "is a folder (expected the path of a memory file)"}[case]
    with pytest.raises(MemoryFileError) as refused:
        Memory.open(path, readonly=readonly)
    message = str(refused.value)
    assert message.startswith(f"{path}: {expected}") and "\n" not in message
    if case != "folder":
        assert _listing(tmp_path) == before          # no byte changed, no side file made


def test_a_missing_folder_and_a_missing_file_read_only_are_refused(tmp_path):
    with pytest.raises(MemoryFileError) as refused:
        Memory.open(tmp_path / "no" / "m.db")
    assert str(refused.value) == (f"{tmp_path / 'no' / 'm.db'}: the folder {tmp_path / 'no'} "
                                  "does not exist (expected a path in an existing folder "
                                  "(create the folder first))")
    with pytest.raises(MemoryFileError, match="no memory file here"):
        Memory.open(tmp_path / "m.db", readonly=True)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_file_opens_read_only_and_is_refused_for_writing(tmp_path):
    """A file this process may not write: made read-only by its mode, or (root writes any
    file) on a read-only bind mount in a mount namespace of the child's own."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.db"
    with Memory.open(path) as memory:
        memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
    check = textwrap.dedent(f"""
        from resolver.errors import MemoryFileError
        from resolver.memory.memory import Memory
        try:
            Memory.open({str(path)!r})
        except MemoryFileError as exc:
            print(exc)
        with Memory.open({str(path)!r}, readonly=True) as memory:
            print(memory.query({ASK!r}).text)
    """)
    if os.geteuid() == 0:
        mount = f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} {folder}"
        args = ["unshare", "-m", "sh", "-c", f"{mount} && exec {sys.executable} -c \"$0\"",
                check]
        if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
            pytest.skip("root, and no mount namespace to make a read-only file system in")
    else:
        path.chmod(0o444)
        folder.chmod(0o555)
        args = [sys.executable, "-c", check]
    try:
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    finally:
        folder.chmod(0o755)
    assert done.stdout == (
        f"{path}: is read-only (expected readonly=True (the read-only commands of factres "
        "memory open it so), or write permission on the file)\nApple\n"), done.stderr


# ---- the guides' examples print what they say -------------------------------------------------
def _shown_example(page: str, heading: str) -> tuple[str, str]:
    """(the first Python block under `heading` on docs/`page`, the text block after it)."""
    import re

    text = (ROOT / "docs" / page).read_text("utf-8")
    section = text[text.index(heading):]
    code, shown = re.search(r"```python\n(.*?)```.*?```text\n(.*?)```", section, re.S).groups()
    return code, shown


def test_the_saving_and_reopening_example_prints_what_the_guide_shows(tmp_path, monkeypatch,
                                                                      capsys):
    code, shown = _shown_example("memory.md", "## Saving and reopening")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/memory.md (saving and reopening)", "exec"), {})
    assert capsys.readouterr().out == shown


def test_fsync_asks_sqlite_for_a_sync_per_commit(tmp_path):
    for fsync, level in ((False, 1), (True, 2)):               # NORMAL, FULL
        with Memory.open(tmp_path / f"{fsync}.db", fsync=fsync) as memory:
            memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
            assert memory._record._conn.execute("PRAGMA synchronous").fetchone()[0] == level
            assert memory._record._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with Memory.open(tmp_path / f"{fsync}.db", readonly=True) as memory:
            assert memory.query(ASK).text == "Apple"
