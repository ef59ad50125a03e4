"""The reference floor of the speed benchmarks: a bare regex parse of a context, stdlib only.

    python benchmarks/regex_parse.py [PATH]      # default: the bundled 262K context

Reads the context and MQuAKE's 44 cloze templates (resolver/data/mquake/cloze_templates.json,
read as a file: nothing from resolver/ is imported), and for each line tries the templates as
compiled regexes in a fixed order, first match wins (file order, with the generic
"[X] is located in __" and "The [X] is __" moved last, as the grammar ranks them). Prints the
number of facts and of lines no template fits. This is what a whole `factres` process is
compared with: the least a Python process must do to read the facts of the file."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOZE = ROOT / "resolver" / "data" / "mquake" / "cloze_templates.json"
DEFAULT = ROOT / "resolver" / "data" / "fc" / "factconsolidation_262k_context.txt"
# Tried last, as the grammar ranks them below the specific templates.
GENERIC = ("P131", "P276", "P1308")


def patterns(cloze: dict[str, str]) -> list[tuple[str, re.Pattern]]:
    """(P-id, compiled regex) in the order the loop tries them."""
    order = [p for p in cloze if p not in GENERIC] + list(GENERIC)
    out = []
    for pid in order:
        before, after = cloze[pid].split("[X]")
        after = after.removesuffix(" __")
        out.append((pid, re.compile(
            r"(\d+)\. " + re.escape(before) + r"(.+)" + re.escape(after) + r" (.+)\.[ \t]*$")))
    return out


def parse(text: str, compiled) -> tuple[list[tuple[int, str, str, str, int]], int]:
    """(serial, subject, P-id, object, line number) of every fact line, and the count of
    non-empty lines (header excluded) that no template fits."""
    found, missed = [], 0
    for number, line in enumerate(text.split("\n"), start=1):
        for pid, pattern in compiled:
            match = pattern.match(line)
            if match:
                found.append((int(match[1]), match[2], pid, match[3], number))
                break
        else:
            if line.strip() and number > 1:
                missed += 1
    return found, missed


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    compiled = patterns(json.loads(CLOZE.read_text("utf-8")))
    facts, missed = parse(path.read_text("utf-8"), compiled)
    print(f"{len(facts)} facts, {missed} lines unmatched")


if __name__ == "__main__":
    main()
