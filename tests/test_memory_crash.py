"""Committed means durable (issue 31): a writer killed with SIGKILL at any moment of a long
ingest leaves a file that opens to the state after some whole `ingest` call (never half a chunk,
never a damaged file), at least every call that returned; and an ingest the disk cannot hold
fails with a clear error, the file opening at the state before it. Real files, real child
processes, nothing mocked."""
from __future__ import annotations

import os
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

from resolver.errors import MemoryFileError
from resolver.haystack import bundled_path
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


# ---- a writer killed while it creates the file (verification U04) --------------------------
# In one process whose imports are done, fork a child per moment: it is killed (SIGKILL) just
# before its k-th call into C (an SQLite statement, a link, an unlink, a write...) while it runs
# `action`; the parent then opens what it left, for writing and read-only. Every moment of the
# creation, from the first to the last call, is one k.
KILLED_AT_EACH_CALL = textwrap.dedent("""
    import os, signal, sys, orjson
    from resolver.errors import MemoryFileError
    from resolver.memory.memory import Memory
    folder, what = sys.argv[1], sys.argv[2]
    STORE = ("memory_file.py", "new_file.py", "writer_lock.py")   # calls that touch the files
    FACTS = "Here is a list of facts:\\n0. Tim Cook is employed by Apple.\\n"
    MORE = "1. Tim Cook is employed by Google.\\n"
    Memory.open(os.path.join(folder, "warm.db")).close()          # every lazy import done
    source = Memory.open(os.path.join(folder, "source.db"))
    source.ingest(FACTS)

    def action(path):
        if what == "open":
            Memory.open(path).close()
        else:
            source.backup(path)

    def killed_at(path, stop):
        pid = os.fork()
        if pid == 0:
            calls = 0
            def profile(frame, event, arg):
                nonlocal calls
                if event == "c_call" and frame.f_code.co_filename.endswith(STORE):
                    calls += 1
                    if calls == stop:
                        os.kill(os.getpid(), signal.SIGKILL)
            sys.setprofile(profile)
            action(path)
            os._exit(0)
        return os.WIFSIGNALED(os.waitpid(pid, 0)[1])

    results, k = [], 1
    while True:
        path = os.path.join(folder, f"m{k}.db")
        killed = killed_at(path, k)
        left = os.path.exists(path)
        try:
            if what == "backup" and left:
                with Memory.open(path, readonly=True) as memory:
                    assert len(memory.store) == 1
            with Memory.open(path) as memory:
                memory.ingest(MORE if what == "backup" and left else FACTS + MORE)
            with Memory.open(path, readonly=True) as memory:
                assert memory.query("Who is Tim Cook employed by?").text == "Google"
            outcome = "ok"
        except (MemoryFileError, AssertionError) as exc:
            outcome = repr(exc)
        results.append((k, killed, left, outcome))
        if not killed:
            break
        k += 1
    print(orjson.dumps(results).decode())
""")


@pytest.mark.parametrize("what", ["open", "backup"])
def test_a_writer_killed_at_any_moment_of_creating_a_file_leaves_none_or_a_whole_one(tmp_path,
                                                                                   what):
    out = subprocess.run([sys.executable, "-c", KILLED_AT_EACH_CALL, str(tmp_path), what],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    results = orjson.loads(out)
    moments = [r for r in results if r[1]]
    assert len(moments) > 5 and not results[-1][1]              # killed at each, then a whole run
    assert [r for r in results if r[3] != "ok"] == []
    assert {r[2] for r in moments} == {False, True}               # before the file, and after
    # nothing half-made is left beside the files
    assert sorted({p.name.split(".db")[1] for p in tmp_path.iterdir()}) == ["", "-lock"]


# ---- a checkpoint cut by a full disk (verification U12) --------------------------------------
def _kept(chunks: list[str], count: int) -> Memory:
    kept = Memory()
    for chunk in chunks[:count]:
        kept.ingest(chunk)
    return kept


def test_a_checkpoint_the_disk_cut_leaves_a_file_that_opens_with_its_log(tmp_path):
    """The file size limit of the full-disk test, set at the file's size when the memory closes:
    SQLite's checkpoint writes the file's first page (its header now counts every page) and
    cannot write the rest, which stay in the write-ahead log. The file and its log are sound
    (before: refused for good as "truncated"); without the log the file is truncated."""
    chunks = [harness.frame_chunk(c) for c in harness.chunk_context(bundled_context("32k"), 512)]
    listed = tmp_path / "chunks.json"
    listed.write_bytes(orjson.dumps(chunks))
    path = tmp_path / "m.db"
    child = textwrap.dedent("""
        import os, resource, signal, sys, orjson
        from resolver.memory.memory import Memory
        path, chunks = sys.argv[1], orjson.loads(open(sys.argv[2], "rb").read())
        memory = Memory.open(path)
        for chunk in chunks[:20]:
            memory.ingest(chunk)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # a write past it fails instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path), resource.RLIM_INFINITY))
        memory.close()
    """)
    subprocess.run([sys.executable, "-c", child, str(path), str(listed)], cwd=ROOT, check=True)
    size, wal = path.stat().st_size, Path(f"{path}-wal").stat().st_size
    pages = int.from_bytes(path.read_bytes()[28:32], "big")
    assert pages * 4096 > size and wal > 100_000             # the state the disk left
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "m.db").write_bytes(path.read_bytes())          # the file alone, without its log
    with pytest.raises(MemoryFileError, match=f"is truncated: {size:,} bytes where its header "
                       f"says {pages * 4096:,}"):
        Memory.open(bare / "m.db", readonly=True)
    kept = _kept(chunks, 20)
    with Memory.open(path, readonly=True) as reopened:
        assert_same_memory(reopened, kept)
    with Memory.open(path) as memory:
        memory.ingest(chunks[20])
        kept.ingest(chunks[20])
        assert_same_memory(memory, kept)
    assert path.stat().st_size >= pages * 4096               # checkpointed at the close


@pytest.fixture
def small_disk(tmp_path):
    """A real file system of 600 KB (tmpfs), when this process may mount one (root)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(where)],
                             capture_output=True) if os.geteuid() == 0 else None
    if mounted is None or mounted.returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_full_disk_on_a_new_file_leaves_a_file_that_opens_and_grows_with_room(small_disk,
                                                                                tmp_path):
    """The verifier's case: `factres memory ingest` of the 262K context in 64-token chunks into
    a new file on a 600 KB disk fails cleanly; the file then opens at some whole ingest (before:
    "truncated: 4,096 bytes where its header says 61,440", for good), and takes the rest once
    the disk is grown."""
    path = small_disk / "f.db"
    context = bundled_path("factconsolidation_262k_context.txt")
    run = subprocess.run([sys.executable, "-c", "from oracle.cli import main; main()", "memory",
                          "ingest", str(path), str(context), "--harness-chunks", "--tokens",
                          "64"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "could not be written, so the ingest was not saved" in run.stderr
    assert "(SQLITE_FULL)" in run.stderr
    chunks = [harness.frame_chunk(c) for c in harness.chunk_context(context.read_text(), 64)]
    with Memory.open(path, readonly=True) as reopened:
        held = reopened.info()["commits"]
        assert 10 < held < len(chunks)
        kept = _kept(chunks, held)
        assert_same_memory(reopened, kept)
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True)
    with Memory.open(path) as memory:
        for chunk in chunks[held:held + 200]:
            memory.ingest(chunk)
            kept.ingest(chunk)
        assert_same_memory(memory, kept)


def test_what_a_killed_creator_left_beside_the_file_goes_and_the_file_stays(tmp_path):
    """A creator killed between the link and the removal leaves a second name of the finished
    file (`-new`); killed earlier, a half-made file and its side files. The next writer removes
    them; the memory itself is untouched."""
    path = tmp_path / "m.db"
    with Memory.open(path) as memory:
        memory.ingest("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n")
    os.link(path, tmp_path / "m.db-new")
    with Memory.open(path) as memory:
        assert memory.query("Who is Tim Cook employed by?").text == "Apple"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db", "m.db-lock"]
    (tmp_path / "n.db-new").write_bytes(b"SQLite format 3\x00" + bytes(4000))
    (tmp_path / "n.db-new-wal").write_bytes(Path(f"{path}").read_bytes()[:100])
    with Memory.open(tmp_path / "n.db") as memory:
        assert len(memory.store) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db", "m.db-lock", "n.db",
                                                          "n.db-lock"]
