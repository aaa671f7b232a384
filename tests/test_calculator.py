"""The calculators: calc under Pyodide, in Chromium, from file://, with the network blocked,
checked against calc under CPython for the same inputs."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

import by_hand
from calc.calculators import CAPACITY
from calc.specs.cards import CARDS
from calc.specs.models import LLAMA_3_1_70B_CONFIG

DEFAULTS = CAPACITY.defaults
from conftest import Calculator, booted_page

DOC = "06-kv-cache.html"
CALC = "[data-calculator=capacity]"
LADDER_PATHS = ["ladder.capacity", "ladder.pool", "ladder.weights", "ladder.activation", "ladder.consumed",
                "ladder.graphs", "ladder.kv_budget",
                "ladder.token_capacity", "ladder.tokens_per_user",
                "ladder.per_token", "ladder.per_user", "ladder.users_worst", "ladder.users_paged", "ladder.binds"]
LEVER_PATHS = ["levers.multi_head.users", "levers.gqa.users", "levers.fp8_cache.users", "levers.paging.users"]


CAPACITY_PAGE = Calculator("capacity")


@pytest.fixture(scope="module")
def calc_page(browser, tmp_path_factory):
    """One page whose calculator has booted, shared by the tests below (booting takes seconds)."""
    yield from booted_page(browser, tmp_path_factory, "06", DOC)


def settle(page) -> str:
    return CAPACITY_PAGE.settle(page)


def set_inputs(page, **values) -> str:
    return CAPACITY_PAGE.set(page, **values)


def reset(page) -> None:
    page.locator(f"{CALC} textarea[name=config]").evaluate("node => { node.value = ''; }")
    set_inputs(page, **DEFAULTS)


def shown(page, path: str) -> str:
    return page.locator(f"{CALC} [data-ref='{path}']").first.text_content()


def live_figures(page) -> dict[str, str]:
    return page.eval_on_selector_all(
        "[data-live] [data-ref]", "nodes => Object.fromEntries(nodes.map(n => [n.dataset.ref, n.textContent]))")


def cpython(values: dict, config: str | None = None, paths=(), charts=(), bars=False) -> dict:
    return CAPACITY.run({**DEFAULTS, **values}, config, list(paths), list(charts), bars)


def test_figures_before_and_after_python_starts_are_identical(watched):
    page = watched.page
    page.goto(watched.url_of(DOC))
    before = live_figures(page)
    tokens = by_hand.token_capacity(by_hand.kv_budget())
    assert before["ladder.users_worst"] == str(tokens // 8_192) and before["ladder.users_paged"] == str(tokens // 2_304)
    page.evaluate("() => window.runbookCalculator.recompute()")
    assert settle(page) == "computed"
    after = live_figures(page)
    assert after == before
    assert watched.network() == [] and watched.problems == []


def test_page_is_readable_before_python_starts(watched):
    page = watched.page
    page.goto(watched.url_of(DOC))
    assert page.get_attribute(CALC, "data-state") == "static"
    assert "computed when the page was built" in page.text_content(f"{CALC} .calc-status")


def test_h200_and_fp8_rederive_every_rung(calc_page):
    page = calc_page.page
    reset(page)
    assert set_inputs(page, card="h200-sxm", kv="fp8") == "computed"
    expected = cpython({"card": "h200-sxm", "kv": "fp8"}, paths=LADDER_PATHS + LEVER_PATHS)["refs"]
    for path in LADDER_PATHS:
        assert shown(page, path) == expected[path][0], path
    bars = page.locator("figure.bars [data-ref]")
    for path in LEVER_PATHS:
        assert page.locator(f"figure.bars [data-ref='{path}']").text_content() == expected[path][0]
    assert bars.count() > 0
    assert shown(page, "ladder.users_worst") != str(by_hand.token_capacity(by_hand.kv_budget()) // 8_192)
    h200, h100 = CARDS["h200-sxm"], CARDS["h100-sxm"]
    driver = h100.reported_mib * 2 ** 20 - h100.cuda_gib * 2 ** 30  # what the driver kept on the H100 SXM
    assert shown(page, "ladder.capacity") == f"{(h200.reported_mib * 2 ** 20 - driver) / 2 ** 30:.2f} GiB"


def test_weight_precision_and_context_limit_follow(calc_page):
    page = calc_page.page
    reset(page)
    values = {"weights": "int4", "context_limit": "32768", "utilisation": "0.85", "token_budget": "512"}
    assert set_inputs(page, **values) == "computed"
    expected = cpython(values, paths=LADDER_PATHS)["refs"]
    for path in LADDER_PATHS:
        assert shown(page, path) == expected[path][0], path
    assert page.get_attribute(f"{CALC} [data-ref='ladder.kv_budget']", "title") == expected["ladder.kv_budget"][1]


def test_the_chart_and_the_bars_follow_the_calculator(calc_page):
    page = calc_page.page
    reset(page)
    values = {"model": "llama-3.1-70b", "card": "mi300x"}
    assert set_inputs(page, **values) == "computed"
    answer = cpython(values, charts=["cache-share"], bars=True)
    page.click(".switch >> text=Deep read")
    expect(page.locator("body")).to_have_attribute("data-form", "deep")
    curves = None
    for _ in range(50):
        curves = page.eval_on_selector(".plot", "node => node.data.map(t => ({name: t.name, x: t.x, y: t.y}))")
        if curves == answer["curves"]["cache-share"]["curves"]:
            break
        page.wait_for_timeout(100)
    assert curves == answer["curves"]["cache-share"]["curves"], "the chart redraws once its form is shown"
    rows = page.eval_on_selector_all("[data-chart-table='cache-share'] tr",
                                     "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    assert rows == answer["curves"]["cache-share"]["rows"], "the numbers behind the chart follow it"
    page.click(".switch >> text=Quick learn")
    widths = page.eval_on_selector_all("figure.bars [data-bar]", "bars => bars.map(b => parseFloat(b.style.width))")
    assert widths == pytest.approx(answer["bars"])


def test_pasting_the_70b_config(calc_page):
    page = calc_page.page
    reset(page)
    config = json.dumps(LLAMA_3_1_70B_CONFIG, indent=2)
    page.locator(f"{CALC} .calc-config summary").click()
    page.fill(f"{CALC} textarea[name=config]", config)
    page.click(f"{CALC} [data-action=use-config]")
    assert settle(page) == "computed"
    expected = cpython({"model": "custom"}, config, ["params.total", "ladder.weights"] + LADDER_PATHS)["refs"]
    assert shown(page, "params.total") == expected["params.total"][0] == "70,553,706,496"
    for path in ["ladder.weights"] + LADDER_PATHS:
        assert shown(page, path) == expected[path][0], path


@pytest.mark.parametrize("field, value", [
    ("context_limit", ""),
    ("context_limit", "-4096"),
    ("context_limit", "0"),
    ("context_limit", "lots"),
    ("context_limit", "1e40"),
    ("context_limit", "8192.5"),
    ("utilisation", "0"),
    ("utilisation", "1.5"),
    ("utilisation", "NaN"),
    ("token_budget", "-3"),
    ("token_budget", "Infinity"),
    ("token_budget", "8"),
    ("conversation", "99999999999"),
    ("conversation", "9000"),
])
def test_bad_numbers_get_a_message_naming_the_field(calc_page, field, value):
    page = calc_page.page
    reset(page)
    CAPACITY_PAGE.refuse(page, field, value, cpython({field: value})["errors"][field])


@pytest.mark.parametrize("config, field_named", [
    ("", "paste the contents of a config.json"),
    ("{\"hidden_size\": 4096,", "not valid JSON"),
    ("[1, 2, 3]", "expected a JSON object"),
    (json.dumps({k: v for k, v in LLAMA_3_1_70B_CONFIG.items() if k != "num_key_value_heads" and k != "num_hidden_layers"}),
     "num_hidden_layers: missing"),
    (json.dumps({**LLAMA_3_1_70B_CONFIG, "hidden_size": -1}), "hidden_size: must be at least 1"),
    (json.dumps({**LLAMA_3_1_70B_CONFIG, "architectures": ["MambaForCausalLM"]}),
     "architectures: MambaForCausalLM is not an architecture calc can size"),
    (json.dumps({**LLAMA_3_1_70B_CONFIG, "num_attention_heads": 10 ** 12}), "larger than any real model"),
])
def test_bad_configs_get_a_message_naming_the_field(calc_page, config, field_named):
    page = calc_page.page
    reset(page)
    page.locator(f"{CALC} details.calc-config").evaluate("node => node.open = true")
    page.fill(f"{CALC} textarea[name=config]", config)
    page.click(f"{CALC} [data-action=use-config]")
    assert settle(page) == "invalid"
    message = page.text_content(f"{CALC} [data-error-for=config]")
    assert field_named in message
    assert message == cpython({"model": "custom"}, config)["errors"]["config"]


def test_pasted_text_is_shown_as_text_never_as_html(calc_page):
    page = calc_page.page
    reset(page)
    hostile = json.dumps({**LLAMA_3_1_70B_CONFIG, "architectures": ["<img src=x onerror=alert(1)>"]})
    page.locator(f"{CALC} details.calc-config").evaluate("node => node.open = true")
    page.fill(f"{CALC} textarea[name=config]", hostile)
    page.click(f"{CALC} [data-action=use-config]")
    assert settle(page) == "invalid"
    assert "<img src=x onerror=alert(1)>" in page.text_content(f"{CALC} [data-error-for=config]")
    assert page.locator(f"{CALC} img").count() == 0


SAMPLE = [
    {},
    {"card": "h100-pcie", "weights": "fp8"},
    {"card": "b200", "model": "llama-3.1-405b", "weights": "fp8", "kv": "fp8"},
    {"card": "a100-40", "weights": "int4", "context_limit": "4096"},
    {"card": "l4", "weights": "int4", "kv": "fp8", "context_limit": "2048", "conversation": "700"},
    {"card": "l40s", "model": "llama-3.1-70b"},
    {"card": "mi300x", "model": "llama-3.1-405b", "utilisation": "0.95", "token_budget": "4096"},
    {"card": "a100-80", "context_limit": "131072", "conversation": "50000"},
]
SAMPLE_PATHS = LADDER_PATHS + LEVER_PATHS + [
    "ladder.kv_budget|worked", "ladder.users_paged|worked", "params.total", "params.total|worked", "weights.int4",
    "kv.per_token_fp8", "read.busy.cache_share", "read.at_max.cache", "floor.busy", "floor.busy_of_promise",
    "long_context.users_worst", "recompute.long", "levers.total_gain", "levers.fp8_weights_budget_gain",
    "family.405b.per_user_at_max", "card.bandwidth", "ladder.held_back",
]


def test_calc_under_pyodide_agrees_with_cpython(calc_page):
    page = calc_page.page
    requests = [{"values": {**DEFAULTS, **values}, "paths": SAMPLE_PATHS} for values in SAMPLE]
    mistral = {"architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
               "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
               "sliding_window": 4096, "vocab_size": 32000, "max_position_embeddings": 32768}
    mixtral = {**mistral, "architectures": ["MixtralForCausalLM"], "num_local_experts": 8,
               "num_experts_per_tok": 2, "sliding_window": None}
    qwen = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "intermediate_size": 18944,
            "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
            "use_sliding_window": False, "sliding_window": 131072, "max_position_embeddings": 32768}
    for config in (mistral, mixtral, qwen):
        requests.append({"values": {**DEFAULTS, "model": "custom"}, "config": json.dumps(config), "paths": SAMPLE_PATHS})
    answers = page.evaluate("requests => Promise.all(requests.map(r => window.runbookCalculator.compute(r)))", requests)
    for request, answer in zip(requests, answers, strict=True):
        assert answer["answer"] == CAPACITY.run(request["values"], request.get("config"), request["paths"])
    totals = [answers[i]["answer"]["refs"]["params.total"][0] for i in (-3, -2, -1)]
    assert totals == ["7,241,732,096", "46,702,792,704", "7,615,616,512"]
