"""The plan-set archive: plans/<set-id>/ holds `plans.jsonl`, `manifest.json` and `SHA256SUMS`.

A set is written once (an existing id is an error), into a temporary folder renamed into place,
so a reader never sees half a set. A set whose every model call failed is never archived (and
one archived so by an older factres fails verification). It is read only after its checksums
match, so a run made years later with an archived set uses exactly the plans that were
compiled, model or not.

plans.jsonl is deterministic: one line per question in dataset order, keys sorted. The
manifest's creation time is metadata, not plan content. SHA256SUMS is in `sha256sum` format, so
`cd plans/<id> && sha256sum -c SHA256SUMS` checks a set without factres."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import orjson

from resolver.errors import ArchiveError, clip
from resolver.haystack import sha256_bytes
from resolver.plan.plans import Compiled, Plan, PlanSet

# The repository's committed plan sets, beside the package in a checkout (a clone, or an
# editable install). A non-editable install (`pip install .`) ships no plan sets: the folder
# would be site-packages/plans, which is nobody's archive, so it is never used (`plans_root`).
PLANS_DIR = Path(__file__).resolve().parents[2] / "plans"
NO_ARCHIVE = ("no plan archive: this factres is not installed from a checkout (a non-editable "
              "`pip install .` ships no plan sets), and $FACTRES_PLANS is not set; set "
              "$FACTRES_PLANS to a folder of plan sets (a clone's plans/, or a new folder for "
              "your own), or install from a clone with `pip install -e .`; the live sets "
              "(live:rules, live:lexicon) need no archive")
SET_ID = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
PLANS_FILE, MANIFEST_FILE, SUMS_FILE = "plans.jsonl", "manifest.json", "SHA256SUMS"
SUMMED = (PLANS_FILE, MANIFEST_FILE)      # the files SHA256SUMS must cover, in this order


def checkout_plans() -> Path | None:
    """The checkout's plans/ when the package runs from a checkout (its pyproject.toml sits
    beside it), else None."""
    return PLANS_DIR if (PLANS_DIR.parent / "pyproject.toml").is_file() else None


def plans_root(root: str | Path | None = None) -> Path:
    """Where plan sets live: `root`, else $FACTRES_PLANS, else the checkout's plans/. An
    install that is no checkout and names no folder has none: ArchiveError saying so."""
    if root is not None:
        return Path(root)
    env = os.environ.get("FACTRES_PLANS")
    if env:
        return Path(env)
    found = checkout_plans()
    if found is None:
        raise ArchiveError(NO_ARCHIVE)
    return found


def check_set_id(set_id: str) -> str:
    if not SET_ID.match(set_id or ""):
        raise ArchiveError(f"bad plan set id {set_id!r}: use lower-case letters, digits, '.', "
                           "'_' and '-', starting with a letter or digit")
    return set_id


def _dumps(obj) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def plans_jsonl(plan_set: PlanSet) -> bytes:
    """The plans.jsonl bytes of a set: deterministic for the same plans."""
    lines = []
    for qid, compiled in plan_set.plans.items():
        lines.append(_dumps({"qid": qid,
                             "question_sha256": plan_set.question_sha256.get(qid, ""),
                             "plans": [p.to_json() for p in compiled.plans],
                             "reason": compiled.reason}))
    return b"".join(line + b"\n" for line in lines)


def check_writable(set_id: str, root: str | Path | None = None) -> Path:
    """The folder a new set would take: checked before any work (a bad or taken id, an
    archive that cannot be written), so no model call is spent on a set that cannot be kept."""
    check_set_id(set_id)
    base = plans_root(root)
    target = base / set_id
    if target.exists():
        raise ArchiveError(f"plan set {set_id!r} already exists at {target}; plan sets are "
                           "immutable, choose another --set-id")
    try:
        base.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkdtemp(prefix=".write-check-", dir=base))
        probe.rmdir()
    except OSError as exc:
        raise ArchiveError(f"cannot write plan sets in {base}: {exc.strerror or exc} (set "
                           "$FACTRES_PLANS to a writable folder)") from None
    return target


def write_plan_set(plan_set: PlanSet, root: str | Path | None = None) -> Path:
    """Archive a plan set under <root>/<set-id>/ and return that folder. Never overwrites.
    A set whose every model call failed is refused: it holds only the lexicon's fallback plans
    and would pass for the model's."""
    set_id = check_set_id(plan_set.set_id)
    if plan_set.manifest.get("all_failed"):
        raise ArchiveError(f"plan set {set_id!r} not archived: every model call failed, so it "
                           f"holds only lexicon fallback plans, not "
                           f"{plan_set.manifest.get('planner')}'s")
    base = plans_root(root)
    target = check_writable(set_id, root)
    body = plans_jsonl(plan_set)
    manifest = dict(plan_set.manifest)
    manifest.update({"set_id": set_id, "count": len(plan_set.plans),
                     "plans_sha256": sha256_bytes(body)})
    manifest.setdefault("created", datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    files = {PLANS_FILE: body, MANIFEST_FILE: orjson.dumps(
        manifest, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"}
    files[SUMS_FILE] = "".join(f"{sha256_bytes(files[n])}  {n}\n" for n in SUMMED).encode()
    tmp = Path(tempfile.mkdtemp(prefix=f".{set_id}.tmp-", dir=base))
    try:
        # mkdtemp makes a private folder (0700); an archived set is shared as run folders are:
        # the mode a folder gets under the user's umask (0755 under 022)
        os.chmod(tmp, 0o777 & ~_umask())
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        try:
            # rename fails if another writer created the set meanwhile: still never overwrites
            os.rename(tmp, target)
        except OSError:
            raise ArchiveError(f"plan set {set_id!r} already exists at {target}; plan sets "
                               "are immutable, choose another --set-id") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def set_dir(set_id_or_path: str | Path, root: str | Path | None = None) -> Path:
    """The folder of a set given by id (under the root) or by path."""
    text = str(set_id_or_path)
    if os.sep in text or "/" in text or (Path(text).is_dir() and not SET_ID.match(text)):
        return Path(text)
    return plans_root(root) / text


def _read_sums(folder: Path) -> tuple[dict[str, str], list[str]]:
    sums_path = folder / SUMS_FILE
    if not sums_path.is_file():
        return {}, [f"{sums_path}: missing"]
    sums, problems = {}, []
    for number, line in enumerate(sums_path.read_text("utf-8", "replace").splitlines(), 1):
        match = re.fullmatch(r"([0-9a-f]{64}) [ *](\S+)", line)
        if not match:
            problems.append(f"{sums_path}:{number}: not a sha256sum line: {line!r}")
            continue
        sums[match[2]] = match[1]
    return sums, problems


def verify_plan_set(set_id_or_path: str | Path, root: str | Path | None = None) -> list[str]:
    """Every problem with an archived set, each naming the file; [] when the set is sound."""
    folder = set_dir(set_id_or_path, root)
    if not folder.is_dir():
        return [f"{folder}: no such plan set"]
    sums, problems = _read_sums(folder)
    if not sums and problems:
        return problems
    for name in SUMMED:
        path = folder / name
        if name not in sums:
            problems.append(f"{folder / SUMS_FILE}: does not list {name}")
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif name in sums and sha256_bytes(path.read_bytes()) != sums[name]:
            problems.append(f"{path}: sha256 mismatch (expected {sums[name][:12]}..., "
                            f"found {sha256_bytes(path.read_bytes())[:12]}...)")
    for name in sorted(set(sums) - set(SUMMED)):
        if not (folder / name).is_file():
            problems.append(f"{folder / name}: missing")
        elif sha256_bytes((folder / name).read_bytes()) != sums[name]:
            problems.append(f"{folder / name}: sha256 mismatch")
    if problems:
        return problems
    # Checksums match; the contents must still agree with each other, and every line must be
    # a plan line `load_plan_set` reads (a set that verifies is a set that can be used).
    try:
        manifest = orjson.loads((folder / MANIFEST_FILE).read_bytes())
    except orjson.JSONDecodeError as exc:
        return [f"{folder / MANIFEST_FILE}: unreadable JSON: {exc}"]
    if not isinstance(manifest, dict):
        return [f"{folder / MANIFEST_FILE}: not a JSON object"]
    try:
        lines = read_plan_lines(folder / PLANS_FILE)[0]
    except ArchiveError as exc:
        return [str(exc)]
    if manifest.get("set_id") != folder.name:
        problems.append(f"{folder / MANIFEST_FILE}: set_id {manifest.get('set_id')!r} does not "
                        f"match the folder name {folder.name!r}")
    if manifest.get("count") != len(lines):
        problems.append(f"{folder / MANIFEST_FILE}: count {manifest.get('count')} but "
                        f"{PLANS_FILE} has {len(lines)} lines")
    body = (folder / PLANS_FILE).read_bytes()
    if manifest.get("plans_sha256") not in (None, sha256_bytes(body)):
        problems.append(f"{folder / MANIFEST_FILE}: plans_sha256 does not match {PLANS_FILE}")
    if manifest.get("all_failed"):
        # archived by an older factres: its plans are the lexicon's under the model's name
        problems.append(f"{folder / MANIFEST_FILE}: all_failed: every model call failed, so "
                        "the set holds only lexicon fallback plans; compile it again")
    return problems


def load_plan_set(set_id_or_path: str | Path, root: str | Path | None = None) -> PlanSet:
    """An archived set, verified first; ArchiveError naming the file on any mismatch."""
    folder = set_dir(set_id_or_path, root)
    if not folder.is_dir():
        raise ArchiveError(f"no plan set {str(set_id_or_path)!r} (no folder {folder}); "
                           "`factres plans list` shows the archive ($FACTRES_PLANS, else the "
                           "repository's plans/)")
    problems = verify_plan_set(folder)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise ArchiveError(f"plan set {folder.name!r} failed verification: {problems[0]}{more}")
    manifest = orjson.loads((folder / MANIFEST_FILE).read_bytes())
    _, plans, shas = read_plan_lines(folder / PLANS_FILE)
    return PlanSet(manifest.get("set_id", folder.name), manifest, plans, shas)


def _kind(value) -> str:
    names = {dict: "a JSON object", list: "a JSON array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def read_plan_lines(path: Path) -> tuple[list[dict], dict[str, Compiled], dict[str, str]]:
    """plans.jsonl read and checked line by line: (the lines, qid -> plans, qid -> question
    sha256). ArchiveError naming the file, the line and what was expected on the first line
    that is not a plan line (not UTF-8, not JSON, not an object, a field of the wrong kind, a
    plan the planner could not have made, a question id twice)."""
    lines: list[dict] = []
    plans: dict[str, Compiled] = {}
    shas: dict[str, str] = {}
    data = path.read_bytes()
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArchiveError(f"{where}: not UTF-8: byte 0x{raw[exc.start]:02x} at offset "
                               f"{exc.start} (expected a JSON object per line)") from None
        if number == 1 and text.startswith("\ufeff"):
            raise ArchiveError(f"{where}: starts with a byte-order mark (factres writes none; "
                               "expected a JSON object per line)")
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ArchiveError(f"{where}: not JSON ({exc.msg}, column {exc.colno}; expected a "
                               "JSON object per line)") from None
        if not isinstance(obj, dict):
            raise ArchiveError(f"{where}: line {number} is {_kind(obj)}, expected an object")
        qid = obj.get("qid")
        if not isinstance(qid, str) or not qid:
            raise ArchiveError(f"{where}: 'qid' is {_kind(qid) if 'qid' in obj else 'missing'} "
                               "(expected a non-empty string)")
        if qid in plans:
            raise ArchiveError(f"{where}: question id {clip(qid)!r} again (expected each once)")
        items = obj.get("plans")
        if not isinstance(items, list):
            raise ArchiveError(f"{where}: 'plans' is "
                               f"{_kind(items) if 'plans' in obj else 'missing'} "
                               "(expected a list of plans)")
        reason, sha = obj.get("reason", ""), obj.get("question_sha256", "")
        if not isinstance(reason, str) or not isinstance(sha, str):
            raise ArchiveError(f"{where}: 'reason' and 'question_sha256' must be strings")
        read = []
        for i, item in enumerate(items):
            try:
                read.append(Plan.from_json(item))
            except ValueError as exc:
                raise ArchiveError(f"{where}: plan {i}: {exc}") from None
        plans[qid] = Compiled(tuple(read), reason)
        shas[qid] = sha
        lines.append(obj)
    return lines, plans, shas


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def list_plan_sets(root: str | Path | None = None) -> list[dict]:
    """One summary per archived set under the root, by id; `ok` says whether it verifies."""
    base = plans_root(root)
    if not base.is_dir():
        return []
    out = []
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and SET_ID.match(p.name)):
        if not (folder / MANIFEST_FILE).exists():
            # a folder that holds no set (an empty one, a stray copy, plans.jsonl and
            # SHA256SUMS without the manifest that says what they are): said so, not listed as
            # a set whose checksums fail, with no count made up
            out.append({"set_id": folder.name, "planner": None, "model": None, "level": None,
                        "temperature": None, "count": None, "fallback_count": None,
                        "all_failed": False, "created": None, "ok": False, "set": False,
                        "problems": [f"{folder}: not a plan set (no {MANIFEST_FILE})"]})
            continue
        problems = verify_plan_set(folder)
        try:
            manifest = orjson.loads((folder / MANIFEST_FILE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            manifest = {}
        out.append({"set_id": folder.name, "planner": manifest.get("planner"),
                    "model": manifest.get("model"), "level": manifest.get("level"),
                    "temperature": manifest.get("temperature"),
                    "count": manifest.get("count"),
                    "fallback_count": manifest.get("fallback_count", 0),
                    "all_failed": manifest.get("all_failed", False),
                    "created": manifest.get("created"), "ok": not problems, "set": True,
                    "checksums": not any(_sums_problem(p) for p in problems),
                    "problems": problems})
    return out


def _sums_problem(problem: str) -> bool:
    """Whether a verification problem is about the files against SHA256SUMS."""
    return any(words in problem for words in (SUMS_FILE, "sha256 mismatch", ": missing"))


def derive_plan_set(plan_set: PlanSet, set_id: str, order: str = "all") -> PlanSet:
    """A derived set: every plan in every order of its relations (original order first,
    repeats dropped)."""
    from resolver.plan.plans import every_order

    if order != "all":
        raise ArchiveError(f"unknown derivation --order {order!r}; known: all")
    check_set_id(set_id)
    plans: dict[str, Compiled] = {}
    for qid, compiled in plan_set.plans.items():
        seen, out = set(), []
        for plan in compiled.plans:
            for variant in every_order(plan):
                key = (variant.entity, variant.chain)
                if key not in seen:
                    seen.add(key)
                    out.append(variant)
        plans[qid] = Compiled(tuple(out), compiled.reason)
    manifest = {k: v for k, v in plan_set.manifest.items()
                if k not in ("created", "plans_sha256", "set_id", "count")}
    manifest.update({"derived_from": plan_set.set_id,
                     "derived_from_plans_sha256": plan_set.manifest.get("plans_sha256"),
                     "derivation": f"order:{order}",
                     "planner": f"derived:order({plan_set.manifest.get('planner')})"})
    return PlanSet(set_id, manifest, plans, dict(plan_set.question_sha256))
