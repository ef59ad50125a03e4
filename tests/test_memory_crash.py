"""Committed means durable (issue 31): a writer killed with SIGKILL at any moment of a long
ingest leaves a file that opens to the state after some whole `ingest` call (never half a chunk,
never a damaged file), at least every call that returned; and an ingest the disk cannot hold
fails with a clear error, the file opening at the state before it. Real files, real child
processes, nothing mocked."""
from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
import pytest
from conftest import bundled_context
from test_memory_file import assert_same_memory

from resolver.mab import harness
from resolver.memory.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
KILLS = 24

# A writer that ingests the chunks from where the file stopped, saying after each call returns
# how many chunks the file holds.
WRITER = textwrap.dedent("""
    import sqlite3, sys, orjson
    from resolver.memory.memory import Memory
    path, chunks = sys.argv[1], orjson.loads(open(sys.argv[2], "rb").read())
    with Memory.open(path) as memory:
        done = sqlite3.connect(path).execute(
            "SELECT count(*) FROM chunks WHERE kind = 'text'").fetchone()[0]
        print("ready", done, flush=True)
        for i in range(done, len(chunks)):
            memory.ingest(chunks[i])
            print(i + 1, flush=True)
    print("done", flush=True)
""")


def _chunks_in(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM chunks WHERE kind = 'text'").fetchone()[0]
    finally:
        conn.close()


def test_a_writer_killed_at_many_points_leaves_whole_ingests(tmp_path):
    chunks = [harness.frame_chunk(c) for c in harness.chunk_context(bundled_context("32k"), 48)]
    assert len(chunks) > 300
    listed = tmp_path / "chunks.json"
    listed.write_bytes(orjson.dumps(chunks))
    path = tmp_path / "m.db"
    kept, fed = Memory(), 0
    rng = random.Random(31)
    kills = 0
    while True:
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(listed)],
                                  cwd=ROOT, stdout=subprocess.PIPE, text=True)
        first = writer.stdout.readline().split()
        assert first[0] == "ready", first
        acknowledged = int(first[1])
        if kills < KILLS:
            # somewhere in the next few calls, often inside one's transaction
            time.sleep(rng.uniform(0.0, 0.08))
            writer.send_signal(signal.SIGKILL)
            kills += 1
        for line in writer.stdout:
            if line.strip().isdigit():
                acknowledged = int(line)
        writer.wait()
        held = _chunks_in(path)
        assert held >= acknowledged                       # every call that returned is there
        assert held <= acknowledged + 1                   # and at most the one being written
        while fed < held:
            kept.ingest(chunks[fed])
            fed += 1
        with Memory.open(path, readonly=True) as reopened:
            assert_same_memory(reopened, kept)
        if writer.returncode == 0:
            break
        assert writer.returncode == -signal.SIGKILL
    assert kills == KILLS and fed == len(chunks)
    kept.flush()
    with Memory.open(path) as memory:
        memory.flush()
        assert_same_memory(memory, kept)


def test_an_ingest_the_disk_cannot_hold_fails_clearly_and_the_file_opens_as_before(tmp_path):
    """A file size limit (RLIMIT_FSIZE, in a child process) stands for a full disk."""
    path = tmp_path / "m.db"
    chunks = [harness.frame_chunk(c) for c in harness.chunk_context(bundled_context("32k"), 512)]
    listed = tmp_path / "chunks.json"
    listed.write_bytes(orjson.dumps(chunks))
    child = textwrap.dedent("""
        import os, resource, signal, sys, orjson
        from resolver.errors import MemoryFileError
        from resolver.memory.memory import Memory
        path, chunks = sys.argv[1], orjson.loads(open(sys.argv[2], "rb").read())
        memory = Memory.open(path)
        for chunk in chunks[:5]:
            memory.ingest(chunk)
        used = sum(os.path.getsize(path + s) for s in ("", "-wal"))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a write past it fails instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (used + 30000, resource.RLIM_INFINITY))
        done = 5
        try:
            for chunk in chunks[5:]:
                memory.ingest(chunk)
                done += 1
        except MemoryFileError as exc:
            print(exc)
        print(done, len(memory.store), memory.query("Who is the head of state of Russia?").text)
    """)
    out = subprocess.run([sys.executable, "-c", child, str(path), str(listed)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == 2, out
    assert out[0].startswith(f"{path}: could not be written, so the ingest was not saved (the "
                             "file holds the state before it): disk I/O error (SQLITE_IOERR_WRITE)"
                             " (expected free disk space (or a higher file size limit or quota), "
                             "then the same call again)"), out[0]
    done = int(out[1].split()[0])
    assert 5 < done < len(chunks)
    kept = Memory()
    for chunk in chunks[:done]:
        kept.ingest(chunk)
    # the memory went back to the state before the failed ingest, and so does the file
    assert out[1] == f"{done} {len(kept.store)} {kept.query('Who is the head of state of Russia?').text}"
    assert _chunks_in(path) == done
    with Memory.open(path) as memory:
        assert_same_memory(memory, kept)
        memory.ingest(chunks[done])                      # the same call again, with room
        kept.ingest(chunks[done])
        assert_same_memory(memory, kept)


@pytest.mark.parametrize("signal_at", ["before", "after"])
def test_a_killed_writer_leaves_no_lock(tmp_path, signal_at):
    path = tmp_path / "m.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from resolver.memory.memory import Memory; "
         f"m = Memory.open({str(path)!r}); "
         + ("m.ingest('Here is a list of facts:\\n0. Tim Cook is employed by Apple.\\n'); "
            if signal_at == "after" else "") + "print('open', flush=True); sys.stdin.read()"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "open\n"
    holder.kill()
    holder.wait()
    with Memory.open(path, timeout=0) as memory:
        assert len(memory.store) == (1 if signal_at == "after" else 0)
