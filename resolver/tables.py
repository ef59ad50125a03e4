"""Score tables: one row model (result_schema.MetricsRow), two renderings (Markdown, LaTeX).

Both renderings take the same cells from `cells()`, so they cannot disagree. Percentages have
one decimal; an unscored run shows "unscored", a missing figure an em dash."""
from __future__ import annotations

from .result_schema import MetricsRow

HEADERS = ("source/size", "kind", "reader", "n", "EM (95% CI)", "answered", "stale rate")
# Markdown alignment per column: numbers right-aligned.
_ALIGN = ("---", "---", "---", "--:", "--:", "--:", "--:")
DASH = "—"


def _pct(x: float | None) -> str:
    return DASH if x is None else f"{100 * x:.1f}"


def cells(row: MetricsRow) -> tuple[str, ...]:
    """The seven table cells of a metrics row, as text."""
    if row["em"] is None:          # only on the test split: gold was never read
        em = "unscored"
    else:
        em = _pct(row["em"])
        if row["ci"] is not None:
            em += f" [{_pct(row['ci'][0])}, {_pct(row['ci'][1])}]"
    if row["stale_rate"] is not None:
        stale = f"{_pct(row['stale_rate'])} ({row['stale']}/{row['stale_eligible']})"
    else:
        stale = DASH
    label = row["label"]
    if row["pooled"]:
        label += f" ({'+'.join(row['sizes'])})"
    return (label, row["kind"], row["reader"], str(row["n"]), em, _pct(row["answered"]), stale)


def markdown(rows: list[MetricsRow]) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join(_ALIGN) + "|"]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text).replace(DASH, "---")


def latex(rows: list[MetricsRow]) -> str:
    """A booktabs tabular; a \\midrule separates the pooled rows from the per-source rows."""
    out = [r"\begin{tabular}{lllrrrr}", r"\toprule",
           " & ".join(_tex(h) for h in HEADERS) + r" \\", r"\midrule"]
    previous_pooled = None
    for row in rows:
        if previous_pooled is False and row["pooled"]:
            out.append(r"\midrule")
        previous_pooled = row["pooled"]
        out.append(" & ".join(_tex(c) for c in cells(row)) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"


RENDERERS = {"md": markdown, "latex": latex}
