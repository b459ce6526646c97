"""The report's plots: matplotlib figures as inline SVG, readable without colour.

Each series has its own hatching as well as its colour, every bar its count written on it, and
text stays text in the SVG (``svg.fonttype = none``), so a screen reader and a search find it.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("svg")  # no display, no GUI toolkit: the backend is chosen before pyplot loads
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from donegate.report.markup import Markup, html, trusted

# Colour-blind-safe (Okabe-Ito) colours, each paired with a distinct hatch.
STYLES: dict[str, tuple[str, str]] = {
    "verified": ("#009E73", ""),
    "unverified": ("#E69F00", "//"),
    "refuted": ("#D55E00", "xx"),
    "none": ("#BBBBBB", ".."),
    "let go": ("#56B4E9", ""),
    "let go, gate vetoed": ("#E69F00", "//"),
    "sent back": ("#D55E00", "xx"),
}
# Counts stay legible on any hatch: a small white box behind each.
_LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"}
# A label is a receipt's text, never mathtext: a test id with "$" in it is drawn as it is.
_RC: Any = {
    "svg.fonttype": "none",
    "font.size": 10,
    "hatch.linewidth": 0.8,
    "svg.hashsalt": "dg",
    "text.parse_math": False,
    "text.usetex": False,
}


def stacked_days(title: str, per_day: Mapping[str, Counter[str]], series: Sequence[str]) -> Markup:
    """Bars per day, one stacked segment per series, each segment labelled with its count."""
    days = list(per_day)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(8, 3.4))
        bottoms = [0] * len(days)
        for name in series:
            values = [per_day[d][name] for d in days]
            colour, hatch = STYLES.get(name, ("#999999", "--"))
            bars = ax.bar(
                [d[5:] for d in days],
                values,
                bottom=bottoms,
                label=name,
                color=colour,
                hatch=hatch,
                edgecolor="black",
                linewidth=0.6,
            )
            ax.bar_label(
                bars,
                labels=[str(v) if v else "" for v in values],
                label_type="center",
                bbox=_LABEL_BOX,
            )
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
        _finish(ax, title, "day (UTC)", "stops")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _svg(fig, title)


def ranked_bars(title: str, items: Sequence[tuple[str, float]], unit: str) -> Markup:
    """Horizontal bars, largest first, each with its value written at its end."""
    labels = [_literal(_short(name)) for name, _ in items][::-1]
    values = [value for _, value in items][::-1]
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(8, 0.8 + 0.32 * max(len(items), 1)))
        # Bars at positions, labels set on them: as categories, two labels shortened to the
        # same text would be drawn as one bar.
        rows = range(len(labels))
        bars = ax.barh(rows, values, color="#0072B2", hatch="\\\\", edgecolor="black", lw=0.6)
        ax.set_yticks(rows, labels)
        shown = [f"{v:g} {unit}" if unit != "s" else f"{v:.1f} s" for v in values]
        ax.bar_label(bars, labels=shown, padding=3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=unit != "s"))
        _finish(ax, title, unit, "")
        ax.margins(x=0.2)
        return _svg(fig, title)


def _finish(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title, loc="left")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.spines[["top", "right"]].set_visible(False)


def _svg(fig: Figure, title: str) -> Markup:
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Title": title, "Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    # Inline in HTML: the XML prolog and DOCTYPE have no place there.
    start = text.index("<svg")
    labelled = html('<svg role="img" aria-label="{}" ', title)
    return trusted(text[start:].replace("<svg ", labelled, 1))


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _literal(text: str) -> str:
    """``text`` as the font renderer takes it: a lone surrogate (a file name that was not
    UTF-8) written as its escape, where it would make the renderer refuse the whole label."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
