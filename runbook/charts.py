"""Charts: data from calc, drawn by Plotly in the page. Each chart is a function of the facts."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from calc.calculators import cache_share as cache_share_data
from calc.calculators import journey_shares as journey_shares_data
from calc.journey import SHARE_CURVE_OUTPUTS
from calc.roofline import CURVE_BATCHES

PALETTE = ["#0f766e", "#b45309", "#7c3aed"]


def cache_share(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The cache's share of every decode step's read, against batch size, at three lengths."""
    data = cache_share_data(namespace)
    series = []
    for curve, colour in zip(data["curves"], PALETTE, strict=True):
        series.append({
            **curve,
            "mode": "lines+markers",
            "type": "scatter",
            "line": {"color": colour, "width": 3},
            "marker": {"size": 7},
            "hovertemplate": "batch %{x}: %{y:.1f}% of the read is cache<extra>%{fullData.name}</extra>",
        })
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "sequences decoding together (batch)"}, "type": "log",
                      "tickvals": list(CURVE_BATCHES), "ticktext": [str(b) for b in CURVE_BATCHES], "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "cache share of each step's read (%)"}, "range": [0, 100],
                      "ticksuffix": "%", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.12, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 40, "b": 56},
            "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 14, "color": "#1c1917"},
            "paper_bgcolor": "rgba(0,0,0,0)",
            "plot_bgcolor": "rgba(0,0,0,0)",
            "height": 380,
        },
        "table": {"columns": ["batch"] + [s["name"] for s in series], "rows": data["rows"]},
    }


def journey_shares(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Each phase's share of one request's wall clock, against how many tokens it writes."""
    data = journey_shares_data(namespace)
    series = []
    for curve, colour in zip(data["curves"], ["#0f766e", "#7c3aed", "#b45309"], strict=True):  # as in the figure
        series.append({
            **curve,
            "mode": "lines+markers",
            "type": "scatter",
            "line": {"color": colour, "width": 3},
            "marker": {"size": 7},
            "hovertemplate": "%{x} tokens out: %{y:.1f}% of the request<extra>%{fullData.name}</extra>",
        })
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "output tokens (log scale)"}, "type": "log",
                      "tickvals": list(SHARE_CURVE_OUTPUTS), "ticktext": [f"{o:,}" for o in SHARE_CURVE_OUTPUTS],
                      "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "share of the wall clock (%)"}, "range": [0, 100],
                      "ticksuffix": "%", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.12, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 40, "b": 56},
            "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 14, "color": "#1c1917"},
            "paper_bgcolor": "rgba(0,0,0,0)",
            "plot_bgcolor": "rgba(0,0,0,0)",
            "height": 380,
        },
        "table": {"columns": ["output tokens"] + [s["name"] for s in series], "rows": data["rows"]},
    }


CHARTS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "cache-share": cache_share,
    "journey-shares": journey_shares,
}


def build(args: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    name = args.strip()
    if name not in CHARTS:
        raise ValueError(f"no chart named '{name}' (known: {', '.join(sorted(CHARTS))})")
    return {"id": name, **CHARTS[name](namespace)}
