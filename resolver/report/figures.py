"""Figures for a paper, from the same folders as the tables (`factres tables --plot`):

- `mab-fc.png` and `mab-fc.pdf`, the main result: EM (%) per source and size with its 95%
  interval, one mark per score run, the baseline (`--baseline`) set apart as a grey band (its
  interval) and line (its EM) behind the others;
- `mab-nbest.png`: plan recall@N (solid) and success@N (dashed) against N, one colour per
  multi-hop source;
- `mab-ceiling.png`: per multi-hop source (so per size), bars for questions with a gold path,
  the one-version-per-key optimum of its store ("§" when not proven optimal) and the
  latest-wins cap, each labelled with its count.

Sized for one column of a two-column paper (3.3 in wide, 300 dpi, 7-8 pt type). matplotlib is
the optional `plot` extra; without it the command says how to install it."""
from __future__ import annotations

from pathlib import Path

import resolver.escape as escape
from resolver.errors import MissingExtraError
from resolver.report.folders import (
    CEILING,
    FC_SOURCE,
    MH_SOURCE,
    NBEST,
    SCORE,
    run_labels,
    source_order,
)
from resolver.run.run_folder import replace_file

FIGURE_FILES = ("mab-fc.png", "mab-fc.pdf", "mab-nbest.png", "mab-ceiling.png")

WIDTH_IN, HEIGHT_IN, DPI = 3.3, 2.3, 300
_STYLE = {"font.size": 7, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 6.5,
          "xtick.labelsize": 7, "ytick.labelsize": 7, "axes.spines.top": False,
          "axes.spines.right": False, "savefig.bbox": "tight", "savefig.pad_inches": 0.03}
# No creation time or version in the PNG or PDF: the same folders give the same bytes.
_METADATA = {"Software": None}
_PDF_METADATA = {"Creator": None, "Producer": None, "CreationDate": None}


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise MissingExtraError("--plot needs matplotlib, which is not installed: "
                                "pip install 'factres[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return matplotlib, plt


def _short(source: str) -> str:
    """factconsolidation_mh_6k -> mh 6K (legend text)."""
    parts = source.split("_")
    if len(parts) >= 3 and parts[-2] in ("sh", "mh"):
        prefix = "" if parts[0] == "factconsolidation" else parts[0] + " "
        return f"{prefix}{parts[-2]} {parts[-1].upper()}"
    return source


def _mh_sources(folders, field: str):
    """(folder, source, figures) of every multi-hop source with questions, in size order."""
    for f in folders:
        for source, v in sorted((f.data.get(field) or {}).items(),
                                key=lambda kv: source_order(kv[0])):
            if MH_SOURCE.search(source) and v["questions"]:
                yield f, source, v


def nbest_figure(folders, path: Path) -> bool:
    """Plan recall@N and success@N per multi-hop source; False when there is nothing to plot."""
    lines = list(_mh_sources(folders, "sources"))
    if not lines:
        return False
    matplotlib, plt = _pyplot()
    set_orders = {tuple(r["set"] for r in v["by_n"]) for _, _, v in lines}
    with matplotlib.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        several_runs = len({f.name for f, _, _ in lines}) > 1
        from matplotlib.lines import Line2D
        handles = []
        for i, (f, source, v) in enumerate(lines):
            colour = colours[i % len(colours)]
            ns = [r["n"] for r in v["by_n"]]
            total = v["questions"]
            ax.plot(ns, [100 * r["plan_recall"] / total for r in v["by_n"]], "-o",
                    color=colour, markersize=3, linewidth=1.2)
            ax.plot(ns, [100 * r["success"] / total for r in v["by_n"]], "--s",
                    color=colour, markersize=3, linewidth=1.2)
            label = _short(source) + (f" ({f.data.get('run') or f.name})" if several_runs else "")
            handles.append(Line2D([], [], color=colour, linewidth=4, label=escape.plot(label)))
        # Colour says the source, line style the measure: one legend row above the axes.
        handles += [Line2D([], [], color="0.2", linestyle="-", marker="o", markersize=3,
                           label="plan recall@N"),
                    Line2D([], [], color="0.2", linestyle="--", marker="s", markersize=3,
                           label="success@N")]
        (order,) = set_orders if len(set_orders) == 1 else (None,)
        if order:
            ax.set_xticks(range(1, len(order) + 1))
            ax.set_xticklabels([f"{n}\n{escape.plot(s)}" for n, s in enumerate(order, 1)],
                               fontsize=6)
            ax.set_xlabel("N: plan sets used, in the order tried")
        else:
            ns_all = sorted({r["n"] for _, _, v in lines for r in v["by_n"]})
            ax.set_xticks(ns_all)               # N counts plan sets: whole numbers only
            ax.set_xlabel("N: first N plan sets used")
        ax.set_ylabel("multi-hop questions (%)")
        ax.set_ylim(0, 105)
        ax.grid(axis="y", linewidth=0.4, alpha=0.5)
        ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                  ncols=2 if several_runs else min(len(handles), 4), frameon=False,
                  handlelength=1.6, columnspacing=1.0)
        _save(fig, path)
        plt.close(fig)
    return True


def _save(fig, path: Path) -> None:
    """The figure rendered in memory (PNG, or PDF for a .pdf path), then written as the tables
    are (`replace_file`): a full disk names the file (matplotlib's own write did not) and
    leaves no half-written figure."""
    import io
    buffer = io.BytesIO()
    if path.suffix == ".pdf":
        fig.savefig(buffer, format="pdf", metadata=_PDF_METADATA)
    else:
        fig.savefig(buffer, format="png", dpi=DPI, metadata=_METADATA)
    replace_file(path, buffer.getvalue())


def _fc_points(folder) -> dict[tuple[str, str], tuple[float, tuple[float, float] | None]]:
    """(kind, size) -> (EM %, its interval in %) of a score run's scored FactConsolidation
    sources."""
    out = {}
    for row in folder.data["metrics"].get("rows", []):
        match = FC_SOURCE.match(row.get("source", "")) if not row.get("pooled") else None
        if match and row.get("em") is not None:
            ci = row.get("ci")
            out[(match[1], match[2])] = (100 * row["em"],
                                         (100 * ci[0], 100 * ci[1]) if ci else None)
    return out


def fc_figure(folders, paths: tuple[Path, ...], baseline: Path | None = None,
              labels: dict[str, str] | None = None) -> bool:
    """mab-fc's figure: per source and size (sh 6K, mh 6K, ...), each run's EM with its
    interval, one colour and mark per run, side by side; the baseline run (its path) as a grey
    band and line behind them. False when no run has a scored FactConsolidation source."""
    runs = [(f, _fc_points(f)) for f in folders if f.kind == SCORE]
    runs = [(f, points) for f, points in runs if points]
    if not runs:
        return False
    names, _ = run_labels([f for f, _ in runs], labels)
    base = next((i for i, (f, _) in enumerate(runs) if baseline is not None
                 and f.path.resolve() == baseline.resolve()), None)
    keys = sorted({k for _, points in runs for k in points},
                  key=lambda k: (source_order(f"_{k[1]}")[0], k[0] != "sh"))
    matplotlib, plt = _pyplot()
    others = [i for i in range(len(runs)) if i != base]
    width = 0.8 / max(len(others), 1)
    markers = "osD^vP*Xh"
    with matplotlib.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        if base is not None:
            f, points = runs[base]
            for x, key in enumerate(keys):
                if key in points:
                    em, ci = points[key]
                    if ci:
                        ax.fill_between([x - 0.45, x + 0.45], ci[0], ci[1], color="0.88",
                                        linewidth=0, zorder=0)
                    ax.plot([x - 0.45, x + 0.45], [em, em], color="0.45", linewidth=1.0,
                            zorder=1)
            ax.plot([], [], color="0.45", linewidth=4, alpha=0.5,
                    label=escape.plot(f"{names[f.name]} (baseline)"))
        for j, i in enumerate(others):
            f, points = runs[i]
            xs, ems, low, high = [], [], [], []
            for x, key in enumerate(keys):
                if key in points:
                    em, ci = points[key]
                    xs.append(x + (j - (len(others) - 1) / 2) * width)
                    ems.append(em)
                    low.append(em - ci[0] if ci else 0)
                    high.append(ci[1] - em if ci else 0)
            ax.errorbar(xs, ems, yerr=[low, high], fmt=markers[j % len(markers)],
                        color=colours[j % len(colours)], markersize=3.5, capsize=1.5,
                        elinewidth=0.8, linewidth=0, zorder=2,
                        label=escape.plot(names[f.name]))
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{kind} {size.upper()}" for kind, size in keys])
        ax.set_xlim(-0.6, len(keys) - 0.4)
        ax.set_xlabel("source and size")
        ax.set_ylabel("EM (%), 95% interval")
        ax.set_ylim(0, 105)
        ax.grid(axis="y", linewidth=0.4, alpha=0.5)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False,
                  handlelength=1.4, columnspacing=1.0)
        for path in paths:
            _save(fig, path)
        plt.close(fig)
    return True


def ceiling_figure(folders, path: Path) -> bool:
    """Gold path / optimum / latest wins per multi-hop source, as % of its questions. An
    optimum not proven optimal (the solver's time limit came first) is labelled with "§"; a
    folder written before the oracle solved each haystack alone is not drawn when it mixes
    sizes (its optimum spans stores)."""
    folders = [f for f in folders if "per_haystack" in f.data or
               len({source_order(s)[0] for s in f.data.get("per_source") or {}}) <= 1]
    groups = [(_short(source), v) for _, source, v in _mh_sources(folders, "per_source")]
    if not groups:
        return False
    matplotlib, plt = _pyplot()
    bars = (("with_gold_path", "gold path exists"), ("optimal", "best one-version-per-key"),
            ("latest_wins", "latest wins"))
    width = 0.8 / len(bars)
    with matplotlib.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN))
        for j, (field, label) in enumerate(bars):
            xs = [i + (j - (len(bars) - 1) / 2) * width for i in range(len(groups))]
            ys = [100 * v[field] / v["questions"] for _, v in groups]
            rects = ax.bar(xs, ys, width * 0.95, label=label)
            marks = ["§" if field == "optimal" and v.get("status", "OPTIMAL") != "OPTIMAL"
                     else "" for _, v in groups]
            ax.bar_label(rects, labels=[f"{v[field]}/{v['questions']}{mark}"
                                        for (_, v), mark in zip(groups, marks)],
                         fontsize=6, padding=1)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([escape.plot(name) for name, _ in groups])
        ax.set_xlabel("multi-hop source")
        ax.set_ylabel("answerable (% of questions)")
        ax.set_ylim(0, 108)
        ax.set_yticks(range(0, 101, 20))
        # Above the axes: inside, the legend sits on the count labels of full bars.
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=len(bars),
                  frameon=False, fontsize=6, handlelength=1.0, columnspacing=0.8)
        _save(fig, path)
        plt.close(fig)
    return True


def write_figures(folders, out: Path, baseline: Path | None = None,
                  labels: dict[str, str] | None = None) -> tuple[list[Path], list[str]]:
    """Write the figures the folders allow into `out`; (paths written, notes on the rest).
    `baseline` (a run folder) is set apart in mab-fc's figure; `labels` name its runs."""
    out.mkdir(parents=True, exist_ok=True)
    _pyplot()                      # fail early and clearly without matplotlib
    written, notes = [], []
    fc_paths = (out / "mab-fc.png", out / "mab-fc.pdf")
    if fc_figure(folders, fc_paths, baseline, labels):
        written += list(fc_paths)
    else:
        notes.append("mab-fc.png: no score run with a scored FactConsolidation source; not "
                     "drawn")
    for name, kind, draw in zip(FIGURE_FILES[2:], (NBEST, CEILING),
                                (nbest_figure, ceiling_figure)):
        path = out / name
        if draw([f for f in folders if f.kind == kind], path):
            written.append(path)
        else:
            notes.append(f"{name}: no {kind} folder with a multi-hop source; not drawn")
    return written, notes
