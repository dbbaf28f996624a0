"""Charts drawn on the server as inline SVG: the geometry here, the markup in `templates/_charts.html`.

Contract: `day_axis` turns per-day rows into one value per day of a window (days without data are
0, or None for a rate); `bars` lays out (stacked) bars and `line` a line with gaps where a value is
None. Both return plain dicts of numbers and labels — no markup — so the template escapes every
label like any other text, and the same numbers fill the table shown next to each chart for
screen readers. No JavaScript, no library, no request to anyone.

Cost: arithmetic over at most a few hundred points.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

WIDTH, HEIGHT = 640, 170
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 10, 26  # room for the axis labels


def utc_offset(at: float) -> int:
    """Seconds east of UTC of the local time zone at `at` (what the store's day buckets add)."""
    return int(time.localtime(at).tm_gmtoff)


def day_number(at: float, offset: int) -> int:
    return int((at + offset) // 86400)


def day_label(day: int) -> str:
    """`Mar 3` for a local day number (`day_number`)."""
    return time.strftime("%b %d", time.gmtime(day * 86400)).replace(" 0", " ")


def day_axis(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], first: int, last: int) -> list[dict[str, Any]]:
    """One dict per day from `first` to `last` (day numbers), with each key's value (0 if none)."""
    found = {int(r["day"]): r for r in rows}
    return [{"day": d, **{k: (found[d][k] if d in found else 0) or 0 for k in keys}} for d in range(first, last + 1)]


def _nice(top: float) -> float:
    """A round axis maximum at or above `top`."""
    if top <= 0:
        return 1.0
    step = 10 ** len(str(int(top))) / 10
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= top:
            return m * step
    return 10 * step


def _frame(count: int) -> tuple[float, float]:
    inner = WIDTH - LEFT - RIGHT
    slot = inner / max(count, 1)
    return inner, slot


def _x_labels(labels: Sequence[str], slot: float) -> list[dict[str, Any]]:
    every = max(1, len(labels) // 6)  # about six labels whatever the window
    return [{"x": round(LEFT + (i + 0.5) * slot, 1), "text": text}
            for i, text in enumerate(labels) if i % every == 0 or i == len(labels) - 1 and len(labels) < 8]


def bars(labels: Sequence[str], stacks: Mapping[str, Sequence[float]], *, title: str, unit: str = "") -> dict[str, Any]:
    """Stacked bars: `stacks` maps a series name (its CSS class) to one value per label."""
    count = len(labels)
    totals = [sum(float(series[i]) for series in stacks.values()) for i in range(count)]
    top = _nice(max(totals, default=0.0))
    inner, slot = _frame(count)
    height = HEIGHT - TOP - BOTTOM
    width = max(1.0, slot * 0.7)
    rects = []
    for i in range(count):
        base = 0.0
        for name, series in stacks.items():
            value = float(series[i])
            if value <= 0:
                continue
            h = value / top * height
            y = TOP + height - (base + h)
            rects.append({"x": round(LEFT + i * slot + (slot - width) / 2, 1), "y": round(y, 1),
                          "w": round(width, 1), "h": round(max(h, 0.5), 1), "series": name,
                          "title": f"{labels[i]}: {value:g} {name}{unit}"})
            base += h
    return {"kind": "bars", "title": title, "width": WIDTH, "height": HEIGHT, "rects": rects,
            "ticks": _ticks(top, unit), "labels": _x_labels(labels, slot), "series": list(stacks),
            "baseline": TOP + height, "left": LEFT, "right": WIDTH - RIGHT}


def line(labels: Sequence[str], values: Sequence[float | None], *, title: str, top: float = 1.0,
         percent: bool = True) -> dict[str, Any]:
    """A line over the labels, broken where a value is None; `top` is the axis maximum."""
    inner, slot = _frame(len(labels))
    height = HEIGHT - TOP - BOTTOM
    path, points, pen_down = [], [], False
    for i, value in enumerate(values):
        if value is None:
            pen_down = False
            continue
        x = round(LEFT + (i + 0.5) * slot, 1)
        y = round(TOP + height - min(max(value, 0.0), top) / top * height, 1)
        path.append(f"{'L' if pen_down else 'M'}{x} {y}")
        pen_down = True
        shown = f"{value * 100:.0f}%" if percent else f"{value:g}"
        points.append({"x": x, "y": y, "title": f"{labels[i]}: {shown}"})
    ticks = [{"y": round(TOP + height - f * height, 1), "text": f"{f * top * 100:.0f}%" if percent else f"{f * top:g}"}
             for f in (0.0, 0.5, 1.0)]
    return {"kind": "line", "title": title, "width": WIDTH, "height": HEIGHT, "path": " ".join(path),
            "points": points, "ticks": ticks, "labels": _x_labels(labels, slot), "baseline": TOP + height,
            "left": LEFT, "right": WIDTH - RIGHT}


def _ticks(top: float, unit: str) -> list[dict[str, Any]]:
    height = HEIGHT - TOP - BOTTOM
    return [{"y": round(TOP + height - f * height, 1), "text": f"{f * top:g}"} for f in (0.0, 0.5, 1.0)]


def sparkline(values: Sequence[float], width: int = 120, height: int = 28) -> str:
    """The `points` of a small polyline (numbers only), for the figures at the top of a page."""
    if not values:
        return ""
    top = max(max(values), 1e-9)
    step = width / max(len(values) - 1, 1)
    return " ".join(f"{round(i * step, 1)},{round(height - 2 - v / top * (height - 4), 1)}"
                    for i, v in enumerate(values))
