"""The reader's state as a memory file keeps it after each commit, bounded.

The state is small in the common case (an incomplete fact or shape), and is stored whole. Text
that holds no fact start can stay pending without bound, though (a long stretch that fits no
template, or chat with no facts sent to a named memory), and writing it whole with every commit
would cost its length each time. Past TAIL_LIMIT characters of pending text, a commit stores the
state without that text and, instead, where to read it again from: the last state stored whole
(a snapshot, itself at most TAIL_LIMIT characters of pending text) and its commit, after which
opening the memory feeds the chunks kept since to a reader started from the snapshot, which
gives the same state (its other fields are checked against the ones stored)."""
from __future__ import annotations

from typing import Iterable

from resolver.memory.stream import FactReader

TAIL_LIMIT = 1 << 16             # characters of pending text a commit stores whole
_BIG = ("_pending", "_raw")      # the reader's fields that may grow without bound


def stored(state: dict, snapshot: dict | None, whole: bool = False) -> tuple[dict, bool]:
    """(the state to store, whether it is whole): whole unless its pending text is past
    TAIL_LIMIT and a snapshot to read it again from exists (`whole` forces it: an erasure,
    after which the chunks kept no longer give the text read)."""
    reader = state["reader"]
    if whole or snapshot is None or sum(len(reader.get(k, "")) for k in _BIG) <= TAIL_LIMIT:
        return state, True
    light = {k: v for k, v in reader.items() if k not in _BIG}
    return {**state, "reader": light, "replay": snapshot}, False


def snapshot(state: dict, arrival: int) -> dict:
    """What a later state names to be read again from: this whole state's reader and held
    bytes, after the commit `arrival`."""
    return {"after": arrival, "reader": state["reader"], "held": state["held"]}


def replayed(reader: FactReader, state: dict, chunks: Iterable[tuple[str, str | bytes | None]],
             complete_utf8) -> None:
    """Give `reader` the state stored without its pending text (`stored`): the snapshot's,
    then every chunk kept since (kind, body) fed as the memory fed it. ValueError when the
    fields stored do not come out the same."""
    from resolver.store.record import BYTES, FLUSH, TEXT

    snap = state["replay"]
    reader.restore(snap["reader"])
    held = bytes.fromhex(snap["held"])
    for kind, body in chunks:
        if kind == TEXT:
            reader.feed(body)
        elif kind == BYTES:
            data = held + body
            cut = complete_utf8(data)
            reader.feed(data[:cut].decode("utf-8"))
            held = data[cut:]
        elif kind == FLUSH:
            reader.flush()
            held = b""
    again = reader.state()
    differ = [k for k, v in state["reader"].items() if again.get(k) != v]
    if differ or held.hex() != state["held"]:
        raise ValueError(f"the reader read again differs in {', '.join(differ) or 'held'}")
