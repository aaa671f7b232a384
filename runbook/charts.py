"""Charts: data from calc, drawn by Plotly in the page. Each chart is a function of the facts."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from calc.calculators import latency_vs_rate as latency_vs_rate_data
from calc.calculators import cache_share as cache_share_data
from calc.calculators import step_vs_batch as step_vs_batch_data
from calc.calculators import journey_shares as journey_shares_data
from calc.calculators import vocabulary_share as vocabulary_share_data
from calc.calculators import anatomy_shares as anatomy_shares_data
from calc.calculators import attention_dial as attention_dial_data
from calc.calculators import rope_wavelengths as rope_wavelengths_data
from calc.calculators import precision_grid as precision_grid_data
from calc.calculators import swap_vs_recompute as swap_vs_recompute_data
from calc.calculators import gpus_vs_rate as gpus_vs_rate_data
from calc.calculators import tp_scaling as tp_scaling_data
from calc.calculators import users_vs_utilisation as users_vs_utilisation_data
from calc.calculators import sampling_filters as sampling_filters_data
from calc.calculators import speculative_speedup as speculative_speedup_data
from calc.calculators import speculative_batch as speculative_batch_data
from calc.calculators import start_load as start_load_data
from calc.documents.journey import SHARE_CURVE_OUTPUTS
from calc.documents.hardware import roofline_curves
from calc.model.roofline import CURVE_BATCHES
from calc.engine.timing import STEP_BATCHES
from calc.documents.tokens import SHARE_CURVE_VOCABS

PALETTE = ["#0f766e", "#b45309", "#7c3aed"]
# Every chart's type and background: the page's own font, and transparent so the page shows through.
PAGE_STYLE = {
    "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 14, "color": "#1c1917"},
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "rgba(0,0,0,0)",
}


def line_series(curves: list[dict], colours: list[str], hover: str) -> list[dict[str, Any]]:
    """Curves from calc as Plotly line-and-marker traces, one colour each."""
    return [{**curve, "mode": "lines+markers", "type": "scatter", "line": {"color": colour, "width": 3},
             "marker": {"size": 7}, "hovertemplate": hover + "<extra>%{fullData.name}</extra>"}
            for curve, colour in zip(curves, colours, strict=True)]


def cache_share(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The cache's share of every decode step's read, against batch size, at three lengths."""
    data = cache_share_data(namespace)
    series = line_series(data["curves"], PALETTE, "batch %{x}: %{y:.1f}% of the read is cache")
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "sequences decoding together (batch)"}, "type": "log",
                      "tickvals": list(CURVE_BATCHES), "ticktext": [str(b) for b in CURVE_BATCHES], "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "cache share of each step's read (%)"}, "range": [0, 100],
                      "ticksuffix": "%", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.12, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 40, "b": 56},
            **PAGE_STYLE,
            "height": 380,
        },
        "table": {"columns": ["batch"] + [s["name"] for s in series], "rows": data["rows"]},
    }


STEP_STYLES = [
    {"line": {"color": "#0f766e", "width": 2, "dash": "dot"}, "mode": "lines"},
    {"line": {"color": "#b45309", "width": 2, "dash": "dot"}, "mode": "lines"},
    {"line": {"color": "#1c1917", "width": 4}, "mode": "lines+markers", "marker": {"size": 7}},
    {"line": {"color": "#7c3aed", "width": 3}, "mode": "lines+markers", "marker": {"size": 6}, "yaxis": "y2"},
    {"line": {"color": "#b91c1c", "width": 2, "dash": "dash"}, "mode": "lines"},
    {"line": {"color": "#57534e", "width": 2, "dash": "dashdot"}, "mode": "lines"},
]


def step_vs_batch(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A decode step's time (reading against computing) and the batch's throughput, against batch."""
    data = step_vs_batch_data(namespace)
    series = [{**curve, **style, "type": "scatter",
               "hovertemplate": "batch %{x}: %{y:.2f}<extra>%{fullData.name}</extra>"}
              for curve, style in zip(data["curves"], STEP_STYLES, strict=True)]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "sequences decoding together (batch)"}, "type": "log",
                      "tickvals": list(STEP_BATCHES), "ticktext": [str(b) for b in STEP_BATCHES], "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "milliseconds per decode step"}, "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "yaxis2": {"title": {"text": "tokens per second (purple)"}, "overlaying": "y", "side": "right",
                       "rangemode": "tozero", "showgrid": False},
            "legend": {"orientation": "h", "y": -0.25, "x": 0},
            "margin": {"l": 64, "r": 64, "t": 16, "b": 120},
            **PAGE_STYLE,
            "height": 460,
        },
        "table": {"columns": ["batch", "matrix multiplies (ms)", "attention (ms)", "step (ms)", "tokens/s"],
                  "rows": data["rows"]},
    }


def journey_shares(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Each phase's share of one request's wall clock, against how many tokens it writes."""
    data = journey_shares_data(namespace)
    series = line_series(data["curves"], ["#0f766e", "#7c3aed", "#b45309"],  # the figure's colours
                         "%{x} tokens out: %{y:.1f}% of the request")
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
            **PAGE_STYLE,
            "height": 380,
        },
        "table": {"columns": ["output tokens"] + [s["name"] for s in series], "rows": data["rows"]},
    }


# A roof per card: neighbours on the chart get colours far apart, and the dashes tell them apart in print.
ROOF_STYLES = [
    ("#0f766e", "solid"), ("#0369a1", "dash"), ("#7c3aed", "solid"), ("#be123c", "solid"), ("#a16207", "solid"),
    ("#a16207", "dot"), ("#4d7c0f", "dash"), ("#57534e", "dot"), ("#c2410c", "dash"),
]
LATER_DASHES = ("dashdot", "longdash", "longdashdot")


def roof_style(i: int) -> tuple[str, str]:
    """The i-th card's roof: the palette's colours again past its end, each time with dashes of its own
    (shifted by i, so the two roofs sharing a colour keep different dashes)."""
    colour, dash = ROOF_STYLES[i % len(ROOF_STYLES)]
    lap = i // len(ROOF_STYLES)
    return colour, dash if lap == 0 else LATER_DASHES[(lap - 1 + i) % len(LATER_DASHES)]


POINT_STYLES = [("#b45309", "diamond", "middle right"), ("#1c1917", "circle", "bottom right"), ("#be123c", "square", "top left")]
POINT_LABELS = ["prefill", "decode, batch 1", "decode, busy"]


def roofline(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Every card's roof on log-log axes, the chosen card's roof underlined, the stack's three points."""
    data = roofline_curves(namespace)
    curves = data["curves"]
    chosen, roofs, points = curves[0], curves[1:-len(POINT_STYLES)], curves[-len(POINT_STYLES):]
    series = [{
        **chosen, "mode": "lines", "type": "scatter", "line": {"color": "rgba(28,25,23,0.22)", "width": 11},
        "hovertemplate": "%{y:,.0f} TFLOP/s at %{x:,.0f} FLOP/B<extra>%{fullData.name}</extra>",
    }]
    for i, curve in enumerate(roofs):
        colour, dash = roof_style(i)
        series.append({
            **curve, "mode": "lines", "type": "scatter", "line": {"color": colour, "width": 2.5, "dash": dash},
            "hovertemplate": "%{y:,.0f} TFLOP/s at %{x:,.0f} FLOP/B<extra>%{fullData.name}</extra>",
        })
    for curve, (colour, symbol, position), label in zip(points, POINT_STYLES, POINT_LABELS, strict=True):
        series.append({
            **curve, "mode": "markers+text", "type": "scatter", "text": [label], "textposition": position,
            "textfont": {"size": 14, "color": colour},
            "marker": {"size": 15, "color": colour, "symbol": symbol, "line": {"color": "#ffffff", "width": 1.5}},
            "hovertemplate": "%{x:,.1f} FLOP/B, %{y:,.1f} TFLOP/s achieved<extra>%{fullData.name}</extra>",
        })
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "FLOP per byte moved (log)"}, "type": "log", "dtick": 1,
                      "gridcolor": "#e7e5e4", "zeroline": False},
            "yaxis": {"title": {"text": "TFLOP/s (log)"}, "type": "log", "dtick": 1, "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "font": {"size": 12}},
            "margin": {"l": 56, "r": 12, "t": 8, "b": 48},
            **PAGE_STYLE,
        },
        "table": {"columns": ["roof or point", "FLOP/B", "TFLOP/s", "what it is"], "rows": data["rows"]},
    }


def vocabulary_share(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The embedding and head's share of all parameters, against the size of the vocabulary."""
    data = vocabulary_share_data(namespace)
    series = line_series(data["curves"], PALETTE[:2], "vocabulary %{x:,}: %{y:.1f}% of all parameters")
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "tokens in the vocabulary (vocab_size)"}, "type": "log",
                      "tickvals": list(SHARE_CURVE_VOCABS), "ticktext": [f"{v // 1000}k" for v in SHARE_CURVE_VOCABS],
                      "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "embedding + head, % of all parameters"}, "rangemode": "tozero",
                      "ticksuffix": "%", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.14, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 48, "b": 56},
            **PAGE_STYLE,
            "height": 380,
        },
        "table": {"columns": ["vocab_size"] + [s["name"] for s in series], "rows": data["rows"]},
    }


def anatomy_shares(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Each part of the model: its share of the parameters held, beside its share of those a token multiplies."""
    data = anatomy_shares_data(namespace)
    series = [{**curve, "type": "bar", "marker": {"color": colour},
               "hovertemplate": "%{x}: %{y:.1f}%<extra>%{fullData.name}</extra>"}
              for curve, colour in zip(data["curves"], ["#0f766e", "#b45309"], strict=True)]
    return {
        "data": series,
        "layout": {
            "barmode": "group",
            "xaxis": {"title": {"text": "part of the model"}, "type": "category"},
            "yaxis": {"title": {"text": "share (%)"}, "range": [0, 100], "ticksuffix": "%", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.14, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 48, "b": 56},
            **PAGE_STYLE,
            "height": 380,
        },
        "table": {"columns": ["part"] + [s["name"] for s in series], "rows": data["rows"]},
    }


DIAL_COLOURS = ["#b91c1c", "#0f766e", "#0369a1", "#7c3aed", "#b45309", "#57534e"]
DIAL_DASHES = ["solid", "solid", "dot", "dash", "dashdot", "longdash"]


def attention_dial(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Cache per user against tokens held, one line per attention setting, on log axes."""
    data = attention_dial_data(namespace)
    series = [{**curve, "mode": "lines+markers", "type": "scatter", "line": {"color": colour, "width": 3, "dash": dash},
               "marker": {"size": 6}, "hovertemplate": "%{x:,} tokens: %{y:.2f} GiB<extra>%{fullData.name}</extra>"}
              for curve, colour, dash in zip(data["curves"], DIAL_COLOURS, DIAL_DASHES, strict=True)]
    lengths = data["curves"][0]["x"]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "tokens the sequence holds (log)"}, "type": "log",
                      "tickvals": lengths, "ticktext": [f"{n // 1024}k" for n in lengths], "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "cache per user (GiB, log)"}, "type": "log", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": -0.22, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 120},
            **PAGE_STYLE,
            "height": 460,
        },
        "table": {"columns": ["tokens held"] + [s["name"] for s in series], "rows": data["rows"]},
    }


ROPE_STYLES = [
    {"line": {"color": "#0f766e", "width": 3}, "mode": "lines+markers", "marker": {"size": 5}},
    {"line": {"color": "#b45309", "width": 3}, "mode": "lines+markers", "marker": {"size": 5}},
    {"line": {"color": "#57534e", "width": 2, "dash": "dash"}, "mode": "lines"},
    {"line": {"color": "#7c3aed", "width": 2, "dash": "dot"}, "mode": "lines"},
]


def rope_wavelengths(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Each RoPE pair's wavelength in tokens (log scale), before and after the model's scaling rule,
    with the original trained length and the context drawn across."""
    data = rope_wavelengths_data(namespace)
    series = [{**curve, **style, "type": "scatter",
               "hovertemplate": "pair %{x}: %{y:,.0f} tokens<extra>%{fullData.name}</extra>"}
              for curve, style in zip(data["curves"], ROPE_STYLES)]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "pair i + 1 (pair i = 0 turns fastest)"}, "gridcolor": "#e7e5e4", "rangemode": "tozero"},
            "yaxis": {"title": {"text": "wavelength: tokens per full turn (log)"}, "type": "log", "dtick": 1,
                      "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": 1.16, "x": 0},
            "margin": {"l": 72, "r": 16, "t": 56, "b": 56},
            **PAGE_STYLE,
            "height": 420,
        },
        "table": {"columns": ["pair", "wavelength as trained (tokens)", "after the scaling rule (tokens)"],
                  "rows": data["rows"]},
    }


def precision_grid(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Users (bars, left) and a lone sequence's decode floor (line, right) at every weight × cache precision."""
    data = precision_grid_data(namespace)
    worst, paged, floor = data["curves"]
    series = [
        {**worst, "type": "bar", "marker": {"color": "#0f766e"}, "hovertemplate": "%{x}: %{y:,} users<extra>worst case</extra>"},
        {**paged, "type": "bar", "marker": {"color": "#99c7c1"}, "hovertemplate": "%{x}: %{y:,} users<extra>paged</extra>"},
        {**floor, "type": "scatter", "mode": "lines+markers", "yaxis": "y2", "line": {"color": "#b45309", "width": 3},
         "marker": {"size": 8}, "hovertemplate": "%{x}: %{y:.2f} ms<extra>decode floor</extra>"},
    ]
    return {
        "data": series,
        "layout": {
            "barmode": "group",
            "xaxis": {"title": {"text": "weights × cache precision"}, "type": "category"},
            "yaxis": {"title": {"text": "users one card holds"}, "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "yaxis2": {"title": {"text": "decode floor, one sequence (ms, amber)"}, "overlaying": "y", "side": "right",
                       "rangemode": "tozero", "showgrid": False},
            "legend": {"orientation": "h", "y": 1.14, "x": 0},
            "margin": {"l": 64, "r": 64, "t": 48, "b": 96},
            **PAGE_STYLE,
            "height": 420,
        },
        "table": {"columns": ["weights × cache", "users, worst case", "users, paged", "decode floor (ms)"],
                  "rows": data["rows"]},
    }


SWAP_STYLES = [
    {"line": {"color": "#0f766e", "width": 2, "dash": "dot"}, "mode": "lines+markers", "marker": {"size": 5}},
    {"line": {"color": "#0f766e", "width": 3}, "mode": "lines+markers", "marker": {"size": 7}},
    {"line": {"color": "#b45309", "width": 3}, "mode": "lines+markers", "marker": {"size": 7, "symbol": "diamond"}},
    {"line": {"color": "#b91c1c", "width": 2, "dash": "dash"}, "mode": "lines"},
]


def swap_vs_recompute(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A preempted sequence's cache moved over the host link against prefilled again, by length."""
    data = swap_vs_recompute_data(namespace)
    series = [{**curve, **style, "type": "scatter",
               "hovertemplate": "%{x:,} tokens: %{y:,.1f} ms<extra>%{fullData.name}</extra>"}
              for curve, style in zip(data["curves"], SWAP_STYLES, strict=True)]
    lengths = data["curves"][0]["x"]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "tokens the preempted sequence holds (log)"}, "type": "log",
                      "tickvals": lengths, "ticktext": [f"{n:,}" if n < 1024 else f"{n // 1024}k" for n in lengths],
                      "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "milliseconds (log)"}, "type": "log", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": -0.25, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 120},
            **PAGE_STYLE,
            "height": 440,
        },
        "table": {"columns": ["tokens held", "swap in (ms)", "swap out and in (ms)", "recompute (ms)"],
                  "rows": data["rows"]},
    }


GPU_STYLES = [
    {"line": {"color": "#0f766e", "width": 3, "shape": "vh"}, "mode": "lines+markers", "marker": {"size": 6}},
    {"line": {"color": "#b45309", "width": 3, "shape": "vh", "dash": "dot"}, "mode": "lines+markers",
     "marker": {"size": 6, "symbol": "square"}},
    {"line": {"color": "#1c1917", "width": 4, "shape": "vh"}, "mode": "lines"},
    {"line": {"color": "#57534e", "width": 2, "dash": "dash"}, "mode": "lines"},
]


def gpus_vs_rate(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Cards each path needs, and the plan with its spares, against the peak request rate."""
    data = gpus_vs_rate_data(namespace)
    series = [{**curve, **style, "type": "scatter",
               "hovertemplate": "%{x:.1f} req/s: %{y} cards<extra>%{fullData.name}</extra>"}
              for curve, style in zip(data["curves"], GPU_STYLES, strict=True)]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "peak requests per second"}, "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "cards needed"}, "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": -0.22, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 110},
            **PAGE_STYLE,
            "height": 420,
        },
        "table": {"columns": ["requests per second", "memory path", "compute path", "the plan"], "rows": data["rows"]},
    }


def tp_scaling(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Users (bars, left) and decode step time (lines, right) against the tensor-parallel degree."""
    data = tp_scaling_data(namespace)
    copy, node, lone, busy = data["curves"]
    series = [
        {**copy, "type": "bar", "marker": {"color": "#0f766e"},
         "hovertemplate": "tp %{x}: %{y:,} users<extra>per copy</extra>"},
        {**node, "type": "bar", "marker": {"color": "#99c7c1"},
         "hovertemplate": "tp %{x}: %{y:,} users<extra>per node of eight</extra>"},
        {**lone, "type": "scatter", "mode": "lines+markers", "yaxis": "y2", "line": {"color": "#b45309", "width": 3},
         "marker": {"size": 8}, "hovertemplate": "tp %{x}: %{y:.1f} ms<extra>one sequence</extra>"},
        {**busy, "type": "scatter", "mode": "lines+markers", "yaxis": "y2",
         "line": {"color": "#7c3aed", "width": 3, "dash": "dot"}, "marker": {"size": 8, "symbol": "diamond"},
         "hovertemplate": "tp %{x}: %{y:.1f} ms<extra>%{fullData.name}</extra>"},
    ]
    return {
        "data": series,
        "layout": {
            "barmode": "group",
            "xaxis": {"title": {"text": "tensor-parallel degree (GPUs per pipeline stage)"}, "type": "category"},
            "yaxis": {"title": {"text": "users at the context limit"}, "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "yaxis2": {"title": {"text": "decode step (ms, lines)"}, "overlaying": "y", "side": "right",
                       "rangemode": "tozero", "showgrid": False},
            "legend": {"orientation": "h", "y": 1.24, "x": 0},
            "margin": {"l": 64, "r": 64, "t": 80, "b": 56},
            **PAGE_STYLE,
            "height": 440,
        },
        "subject": "parallel.model.name",  # the model split, which the reference stack keeps beside its own
        "table": {"columns": ["tp", "users per copy", "users per node", "step, one sequence (ms)",
                              "step, busy batch (ms)", "communicating, one sequence"],
                  "rows": data["rows"]},
    }


USERS_STYLES = [
    {"line": {"color": "#0f766e", "width": 2, "dash": "dot"}, "mode": "lines"},
    {"line": {"color": "#0f766e", "width": 3}, "mode": "lines+markers", "marker": {"size": 6}},
    {"line": {"color": "#b45309", "width": 3}, "mode": "lines+markers", "marker": {"size": 6, "symbol": "diamond"}},
]


def users_vs_utilisation(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Users a launch line admits as --gpu-memory-utilization moves: memory's count and the scheduler's cap."""
    data = users_vs_utilisation_data(namespace)
    series = [{**curve, **style, "type": "scatter",
               "hovertemplate": "utilisation %{x:.2f}: %{y:,} users<extra>%{fullData.name}</extra>"}
              for curve, style in zip(data["curves"], USERS_STYLES, strict=True)]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "--gpu-memory-utilization"}, "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "users admitted"}, "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "legend": {"orientation": "h", "y": -0.25, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 120},
            **PAGE_STYLE,
            "height": 440,
        },
        "table": {"columns": ["utilisation", "paged, memory alone", "paged, capped", "worst case, capped"],
                  "rows": data["rows"]},
    }


SAMPLING_COLOURS = ["#a8a29e", "#0369a1", "#7c3aed", "#b45309", "#0f766e"]


def sampling_filters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Each candidate token's probability after every step of the sampler, as grouped bars."""
    data = sampling_filters_data(namespace)
    series = [{**curve, "type": "bar", "marker": {"color": colour},
               "hovertemplate": "%{x}: %{y:.1f}%<extra>%{fullData.name}</extra>"}
              for curve, colour in zip(data["curves"], SAMPLING_COLOURS, strict=True)]
    return {
        "data": series,
        "layout": {
            "barmode": "group",
            "xaxis": {"title": {"text": "candidate next token"}, "type": "category"},
            "yaxis": {"title": {"text": "probability (%)"}, "ticksuffix": "%", "gridcolor": "#e7e5e4", "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.3, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 120},
            **PAGE_STYLE,
            "height": 420,
        },
        "follows": "sampling.setting",  # invented logits and the sampler's settings, not a model or a card
        "table": {"columns": ["token"] + [s["name"] for s in series], "rows": data["rows"]},
    }


GAMMA_COLOURS = ["#a8a29e", "#0369a1", "#0f766e", "#7c3aed", "#b45309"]


def speculative_speedup(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The rule's speedup against drafted tokens γ, one line per acceptance rate, the reader's last."""
    data = speculative_speedup_data(namespace)
    series = line_series(data["curves"], GAMMA_COLOURS, "γ = %{x}: %{y:.2f}×")
    series[-1]["line"] = {"color": GAMMA_COLOURS[-1], "width": 4, "dash": "dash"}
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "drafted tokens per pass (γ)"}, "dtick": 1, "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "speedup over plain decoding (×)"}, "ticksuffix": "×", "gridcolor": "#e7e5e4",
                      "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.25, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 110},
            **PAGE_STYLE,
            "height": 420,
        },
        "table": {"columns": ["γ"] + [s["name"] for s in series], "rows": data["rows"]},
    }


BATCH_STYLES = [
    {"line": {"color": "#0f766e", "width": 4}, "mode": "lines+markers", "marker": {"size": 7}},
    {"line": {"color": "#b45309", "width": 2, "dash": "dot"}, "mode": "lines"},
    {"line": {"color": "#b91c1c", "width": 2, "dash": "dash"}, "mode": "lines"},
]


def speculative_batch(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Speedup against batch on the time model, the batch-blind rule, and break-even."""
    data = speculative_batch_data(namespace)
    series = [{**curve, **style, "type": "scatter", "hovertemplate": "batch %{x}: %{y:.2f}×<extra>%{fullData.name}</extra>"}
              for curve, style in zip(data["curves"], BATCH_STYLES, strict=True)]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "sequences decoding together (batch)"}, "type": "log",
                      "tickvals": list(STEP_BATCHES), "ticktext": [str(b) for b in STEP_BATCHES], "gridcolor": "#e7e5e4"},
            "yaxis": {"title": {"text": "speedup over plain decoding (×)"}, "ticksuffix": "×", "gridcolor": "#e7e5e4",
                      "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.25, "x": 0},
            "margin": {"l": 64, "r": 16, "t": 16, "b": 110},
            **PAGE_STYLE,
            "height": 420,
        },
        "table": {"columns": ["batch", "on the time model", "the rule"], "rows": data["rows"]},
    }


LATENCY_STYLES = [
    {"line": {"color": "#b45309", "width": 3}, "mode": "lines+markers", "marker": {"size": 7},
     "hovertemplate": "%{x:.2f} req/s: %{y:,.0f} ms<extra>p95 TTFT</extra>"},
    {"line": {"color": "#0f766e", "width": 3}, "mode": "lines+markers", "marker": {"size": 7, "symbol": "diamond"},
     "hovertemplate": "%{x:.2f} req/s: %{y:,.1f} ms<extra>p95 ITL</extra>"},
    {"line": {"color": "#b45309", "width": 2, "dash": "dash"}, "mode": "lines", "hoverinfo": "skip"},
    {"line": {"color": "#0f766e", "width": 2, "dash": "dash"}, "mode": "lines", "hoverinfo": "skip"},
    {"line": {"color": "#a8a29e", "width": 2}, "mode": "lines+markers", "marker": {"size": 5}, "yaxis": "y2",
     "hovertemplate": "%{x:.2f} req/s: %{y:,.0f} tok/s<extra>throughput</extra>"},
    {"line": {"color": "#7c3aed", "width": 3}, "mode": "lines+markers", "marker": {"size": 7, "symbol": "square"},
     "yaxis": "y2", "hovertemplate": "%{x:.2f} req/s: %{y:,.0f} tok/s<extra>goodput</extra>"},
]


def latency_vs_rate(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """p95 TTFT and ITL against request rate on a log scale with their SLOs dashed (left), and
    throughput and goodput in tokens per second (right), all from the simulated stream."""
    data = latency_vs_rate_data(namespace)
    series = [{**curve, **style, "type": "scatter"} for curve, style in zip(data["curves"], LATENCY_STYLES, strict=True)]
    return {
        "data": series,
        "layout": {
            "xaxis": {"title": {"text": "request rate, one replica (req/s)"}, "gridcolor": "#e7e5e4", "rangemode": "tozero"},
            "yaxis": {"title": {"text": "p95 latency (ms, log); SLOs dashed"}, "type": "log", "gridcolor": "#e7e5e4"},
            "yaxis2": {"title": {"text": "tokens per second (violet: goodput)"}, "overlaying": "y", "side": "right",
                       "tickformat": ",.0f", "nticks": 6,
                       "rangemode": "tozero", "showgrid": False},
            "legend": {"orientation": "h", "y": -0.25, "x": 0},
            "margin": {"l": 64, "r": 64, "t": 16, "b": 120},
            **PAGE_STYLE,
            "height": 460,
        },
        "table": {"columns": ["req/s", "p95 TTFT (ms)", "p95 ITL (ms)", "throughput (tok/s)", "goodput (tok/s)",
                              "met both SLOs", "preemptions"],
                  "rows": data["rows"]},
    }


def start_load(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Card load by phase (stacked bars), the whole GPUs it rounds up to, and $ per M tokens (right axis), by request rate."""
    data = start_load_data(namespace)
    prefill, decode, gpus, dollars = data["curves"]
    series = [
        {**prefill, "type": "bar", "marker": {"color": "#0f766e"},
         "hovertemplate": "%{x}: %{y:.2f} cards<extra>prefill</extra>"},
        {**decode, "type": "bar", "marker": {"color": "#7c3aed"},
         "hovertemplate": "%{x}: %{y:.2f} cards<extra>decode</extra>"},
        {**gpus, "type": "scatter", "mode": "markers", "marker": {"color": "#1c1917", "size": 12, "symbol": "line-ew-open",
                                                                                    "line": {"width": 3}},
         "hovertemplate": "%{x}: %{y} GPUs<extra>whole GPUs</extra>"},
        {**dollars, "type": "scatter", "mode": "lines+markers", "yaxis": "y2",
         "line": {"color": "#b45309", "width": 3}, "marker": {"size": 8, "symbol": "diamond"},
         "hovertemplate": "%{x}: $%{y:.3f} per M tokens<extra>unit cost</extra>"},
    ]
    return {
        "data": series,
        "layout": {
            "barmode": "stack",
            "xaxis": {"title": {"text": "requests per second"}, "type": "category"},
            "yaxis": {"title": {"text": "cards"}, "type": "linear", "rangemode": "tozero", "gridcolor": "#e7e5e4"},
            "yaxis2": {"title": {"text": "$ per M generated tokens (amber)"}, "type": "linear", "overlaying": "y",
                       "side": "right", "rangemode": "tozero", "tickprefix": "$", "tickformat": ".2f", "showgrid": False},
            "legend": {"orientation": "h", "y": 1.16, "x": 0},
            "margin": {"l": 64, "r": 72, "t": 56, "b": 56},
            **PAGE_STYLE,
            "height": 420,
        },
        "table": {"columns": ["requests/s", "prefill cards", "decode cards", "whole GPUs", "$ per M tokens"],
                  "rows": data["rows"]},
    }


CHARTS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "precision-grid": precision_grid,
    "swap-vs-recompute": swap_vs_recompute,
    "gpus-vs-rate": gpus_vs_rate,
    "attention-dial": attention_dial,
    "rope-wavelengths": rope_wavelengths,
    "cache-share": cache_share,
    "step-vs-batch": step_vs_batch,
    "journey-shares": journey_shares,
    "roofline": roofline,
    "vocabulary-share": vocabulary_share,
    "anatomy-shares": anatomy_shares,
    "tp-scaling": tp_scaling,
    "users-vs-utilisation": users_vs_utilisation,
    "sampling-filters": sampling_filters,
    "speculative-speedup": speculative_speedup,
    "speculative-batch": speculative_batch,
    "latency-vs-rate": latency_vs_rate,
    "start-load": start_load,
}


def build(args: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    name = args.strip()
    if name not in CHARTS:
        raise ValueError(f"no chart named '{name}' (known: {', '.join(sorted(CHARTS))})")
    chart = CHARTS[name](namespace)
    for key, axis in chart.get("layout", {}).items():
        if key.startswith(("xaxis", "yaxis")) and "overlaying" in axis:
            # Plotly 4 places an overlaying axis's ticks where the axis under it has its own (tickmode
            # "sync"), which on a different scale reads 103, 271, 492…: give it round ticks of its own.
            axis.setdefault("tickmode", "auto")
    return {"id": name, **chart}
