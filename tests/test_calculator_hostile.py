"""The calculator against a hostile reader, in Chromium from file:// with the network blocked:
reloads and history, a browser that cannot run Python, garbage and enormous input, races."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from arithmetic import check
from calc.calculators import CAPACITY
from calc.specs.models import LLAMA_3_1_8B_CONFIG, LLAMA_3_1_70B_CONFIG
from conftest import Watched
from test_calculator import CALC, DOC, cpython, live_figures, reset, set_inputs, settle, shown

LONG_TASK_LIMIT_MS = 200

WATCH_LONG_TASKS = """
window.longTasks = [];
new PerformanceObserver((list) => list.getEntries().forEach((task) => window.longTasks.push(task.duration)))
  .observe({ type: "longtask", buffered: true });
"""


@pytest.fixture(scope="module")
def hostile(browser, tmp_path_factory):
    """A site with document 06 alone, and a fresh watched page per test from it."""
    import build
    from conftest import ROOT
    site = tmp_path_factory.mktemp("hostile-site") / "site"
    build.build(ROOT / "content", site, only="06")
    contexts = []

    def open_page(viewport=(1200, 900), init_script: str = "", fragment: str = "") -> Watched:
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        contexts.append(context)
        if init_script:
            context.add_init_script(init_script)
        watched = Watched(context, site)
        watched.page.goto(watched.url_of(DOC, fragment))
        return watched

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture(scope="module")
def booted(hostile):
    """One page whose Python has started, shared by the input tests below."""
    watched = hostile(init_script=WATCH_LONG_TASKS)
    watched.page.evaluate("() => window.runbookCalculator.start()")
    yield watched
    assert watched.network() == []
    assert watched.problems == []


def python_state(page) -> str:
    return page.get_attribute(CALC, "data-python") or ""


def wait_for_python(page, state: str = "ready") -> None:
    expect(page.locator(CALC)).to_have_attribute("data-python", state, timeout=60_000)


def status(page) -> str:
    return page.text_content(f"{CALC} .calc-status")


def paste_config(page, text: str) -> str:
    page.locator(f"{CALC} details.calc-config").evaluate("node => node.open = true")
    page.locator(f"{CALC} textarea[name=config]").evaluate("(node, text) => { node.value = text; }", text)
    page.click(f"{CALC} [data-action=use-config]")
    return settle(page)


def error_for(page, field: str) -> str:
    return page.text_content(f"{CALC} [data-error-for={field}]")


# 1. Reloads, history and early interaction

def test_python_starts_after_every_reload(hostile):
    watched = hostile()
    page = watched.page
    for _ in range(3):
        page.locator(CALC).scroll_into_view_if_needed()
        wait_for_python(page)
        page.reload()
    wait_for_python(page)
    assert set_inputs(page, card="h200-sxm") == "computed"
    assert shown(page, "ladder.capacity") == cpython({"card": "h200-sxm"}, paths=["ladder.capacity"])["refs"]["ladder.capacity"][0]
    assert watched.problems == [] and watched.network() == []


def test_python_starts_after_back_and_forward(hostile):
    watched = hostile()
    page = watched.page
    page.locator(CALC).scroll_into_view_if_needed()
    wait_for_python(page)
    page.goto(watched.url_of("06-kv-cache.html", "#deep"))
    page.goto("about:blank")
    page.go_back()
    page.go_back()
    page.go_forward()
    page.locator(CALC).scroll_into_view_if_needed()
    wait_for_python(page)
    assert set_inputs(page, kv="fp8") == "computed"
    assert watched.problems == [] and watched.network() == []


def test_an_input_while_the_page_is_still_loading_is_answered(hostile):
    watched = hostile()
    page = watched.page
    page.goto(watched.url_of(DOC), wait_until="commit")
    page.wait_for_selector(f"{CALC} [name=context_limit]", state="attached")
    page.evaluate("() => window.runbookCalculator && window.runbookCalculator.start()")
    page.wait_for_load_state()
    assert set_inputs(page, context_limit="4096") == "computed"
    assert watched.problems == []


def test_a_failed_start_is_retried_by_the_next_input(hostile):
    fail_once = """
    const RealWorker = window.Worker;
    let failures = 1;
    window.Worker = function (url) {
      if (failures-- > 0) throw new Error("simulated failure");
      return new RealWorker(url);
    };
    """
    watched = hostile(init_script=fail_once)
    page = watched.page
    page.evaluate("() => window.runbookCalculator.start().catch(() => {})")
    expect(page.locator(CALC)).to_have_attribute("data-state", "unavailable", timeout=60_000)
    assert "simulated failure" in status(page) and "try again" in status(page)
    assert set_inputs(page, context_limit="4096") == "computed"
    assert python_state(page) == "ready"
    assert watched.problems == []


# 3. A browser that cannot run Python

@pytest.mark.parametrize("breakage, reason", [
    ("delete window.Worker;", "cannot run a Web Worker"),
    ("delete window.WebAssembly;", "no WebAssembly"),
    ("""document.addEventListener("DOMContentLoaded", () => {
          document.querySelector('[data-runtime-file="pyodide.asm.wasm"]').textContent = "0123456789";
        });""", "Python could not start"),
])
def test_without_python_the_page_stays_readable_and_says_why_once(hostile, breakage, reason):
    watched = hostile(init_script=breakage)
    page = watched.page
    before = live_figures(page)
    for value in ("4096", "2048", "1024"):
        page.fill(f"{CALC} [name=context_limit]", value)
        expect(page.locator(CALC)).to_have_attribute("data-state", "unavailable", timeout=60_000)
    assert reason in status(page)
    assert status(page).count("unavailable") == 1
    assert live_figures(page) == before
    assert page.is_visible(".ladder")
    assert watched.problems == []


# 2, 11: hostile configs

def test_a_deeply_nested_config_is_refused_inline_and_python_survives(booted):
    page = booted.page
    reset(page)
    nested = json.dumps({**LLAMA_3_1_70B_CONFIG, "x": 0}).replace("0}", "[" * 5000 + "]" * 5000 + "}")
    assert paste_config(page, nested) == "invalid"
    assert "nests 5,001 levels deep" in error_for(page, "config")
    assert "calculator" not in status(page).lower() or "highlighted" in status(page)
    assert paste_config(page, json.dumps(LLAMA_3_1_70B_CONFIG)) == "computed"
    assert shown(page, "params.total") == "70,553,706,496"


def test_a_five_thousand_digit_number_gets_a_plain_message(booted):
    page = booted.page
    reset(page)
    config = json.dumps(LLAMA_3_1_8B_CONFIG).replace('"vocab_size": 128256', '"vocab_size": ' + "9" * 5001)
    assert paste_config(page, config) == "invalid"
    message = error_for(page, "config")
    assert "5,001 digits long" in message and "set_int_max_str_digits" not in message


def test_a_multimodal_config_says_what_was_counted(booted):
    page = booted.page
    reset(page)
    config = {"architectures": ["LlavaForConditionalGeneration"], "text_config": {**LLAMA_3_1_8B_CONFIG},
              "vision_config": {"hidden_size": 1024, "num_hidden_layers": 24}}
    assert paste_config(page, json.dumps(config)) == "computed"
    note = page.text_content(f"{CALC} [data-note-for=config]")
    assert "text_config" in note and "vision_config" in note and "not counted" in note
    assert shown(page, "params.total") == "8,030,261,248"
    assert set_inputs(page, model="llama-3.1-8b") == "computed"
    assert page.text_content(f"{CALC} [data-note-for=config]") == ""


# 4, 5, 11: numbers typed wrongly

@pytest.mark.parametrize("field, value, says", [
    ("token_budget", "3,5", "write decimals with a point (3.5)"),
    ("token_budget", "1,2,3", "a comma may only separate groups of three digits"),
    ("utilisation", "0,9", "write decimals with a point (0.9)"),
    ("context_limit", "8192\u200f", "U+200F"),
])
def test_commas_and_invisible_characters_are_named(booted, field, value, says):
    page = booted.page
    reset(page)
    assert set_inputs(page, **{field: value}) == "invalid"
    assert says in error_for(page, field)
    assert error_for(page, field) == cpython({field: value})["errors"][field]


def test_a_huge_paste_into_a_number_field_is_refused_quickly(booted):
    page = booted.page
    reset(page)
    field = page.locator(f"{CALC} [name=token_budget]")
    field.evaluate("node => { node.value = '9'.repeat(5_000_000); node.dispatchEvent(new Event('input', {bubbles: true})); }")
    assert settle(page) == "invalid"
    assert "too long to be a number" in error_for(page, "token_budget")
    assert len(error_for(page, "token_budget")) < 120


def test_a_thousands_comma_is_accepted(booted):
    page = booted.page
    reset(page)
    assert set_inputs(page, context_limit="16,384") == "computed"
    assert shown(page, "ladder.per_user") == cpython({"context_limit": "16384"}, paths=["ladder.per_user"])["refs"]["ladder.per_user"][0]


def test_minus_zero_is_zero(booted):
    """-0 reads as zero, and zero tokens a step is below what the field takes: the range says so."""
    page = booted.page
    reset(page)
    assert set_inputs(page, token_budget="-0") == "invalid"
    assert error_for(page, "token_budget") == cpython({"token_budget": "-0"})["errors"]["token_budget"]
    assert "between 16 and" in error_for(page, "token_budget")
    assert not any(text.startswith("−0") for text in live_figures(page).values())


# 6: the arithmetic shown is the arithmetic used

@pytest.mark.parametrize("utilisation", ["0.999", "0.056", "0.9"])
def test_every_worked_line_reproduces_its_figure(booted, utilisation):
    page = booted.page
    reset(page)
    assert set_inputs(page, utilisation=utilisation) == "computed"
    titles = page.eval_on_selector_all("[data-live] [data-ref][title]", "nodes => nodes.map(n => n.title)")
    worked = page.eval_on_selector_all(f"{CALC} .rung-worked", "nodes => nodes.map(n => n.textContent)")
    assert titles and worked
    for line in titles + worked:
        assert check(line) == [], line
    assert f"× {utilisation}⌉ =" in page.get_attribute(f"{CALC} [data-ref='ladder.pool']", "title")


# 7: long strings

def test_long_names_are_cut_short_and_wrapped(booted):
    page = booted.page
    reset(page)
    config = {**LLAMA_3_1_70B_CONFIG, "architectures": ["X" * 150_000]}
    assert paste_config(page, json.dumps(config)) == "invalid"
    assert len(error_for(page, "config")) < 300
    assert page.evaluate("document.documentElement.scrollWidth") <= 1200


def test_a_snapshot_path_fits_a_phone(hostile):
    watched = hostile(viewport=(390, 844))
    page = watched.page
    path = ("/home/reader/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/"
            "0e9e39f249a16976918f6564b8830bc894c89659")
    config = {**LLAMA_3_1_8B_CONFIG, "_name_or_path": path}
    assert paste_config(page, json.dumps(config)) == "computed"
    assert shown(page, "model.name") == "meta-llama/Llama-3.1-8B-Instruct"
    unknown = {**LLAMA_3_1_8B_CONFIG, "_name_or_path": "/srv/models/" + "a-very-long-directory-name-without-breaks" * 3}
    assert paste_config(page, json.dumps(unknown)) == "computed"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert watched.problems == []


# 8: the status tells the truth

def test_status_says_python_is_ready_after_a_start_on_scroll(hostile):
    watched = hostile()
    page = watched.page
    page.locator(CALC).scroll_into_view_if_needed()
    wait_for_python(page)
    assert "Starting Python" not in status(page)
    assert "ready" in status(page)


# 9: paging below the worst case

def test_paging_never_admits_fewer_users_than_the_worst_case(booted):
    page = booted.page
    reset(page)
    assert set_inputs(page, context_limit="1", conversation="1") == "computed"
    worst = int(shown(page, "ladder.users_worst").replace(",", ""))
    paged = int(shown(page, "ladder.users_paged").replace(",", ""))
    assert paged == worst == int(cpython({"context_limit": "1", "conversation": "1"},
                                         paths=["ladder.users_paged"])["refs"]["ladder.users_paged"][0].replace(",", ""))
    widths = page.eval_on_selector_all(
        "figure.bars .bar-row", "rows => rows.map(r => [r.querySelector('.bar-fill').getBoundingClientRect().width,"
                                " r.querySelector('.bar-track').getBoundingClientRect().width])")
    assert all(fill <= track + 0.5 for fill, track in widths)


# 10: a huge paste, and one computation per change

def test_a_five_megabyte_paste_neither_freezes_nor_slows_the_page(booted):
    page = booted.page
    reset(page)
    page.evaluate("window.longTasks = []")
    huge = json.dumps({**LLAMA_3_1_8B_CONFIG, "padding": "x" * 5_000_000})
    assert paste_config(page, huge) == "invalid"
    assert "over 200,000 characters" in error_for(page, "config")
    runs = page.evaluate("performance.getEntriesByName('calc-run').length")
    started = page.evaluate("performance.now()")
    assert set_inputs(page, model="llama-3.1-70b") == "computed"
    assert set_inputs(page, card="b200") == "computed"
    elapsed = page.evaluate("performance.now()") - started
    assert page.evaluate("performance.getEntriesByName('calc-run').length") == runs + 2, "one computation per change"
    assert elapsed < 2_000
    assert max(page.evaluate("window.longTasks"), default=0) < LONG_TASK_LIMIT_MS


def test_no_long_task_during_boot_or_recompute(hostile):
    watched = hostile(init_script=WATCH_LONG_TASKS)
    page = watched.page
    page.wait_for_selector(".plot .main-svg", state="attached")  # Plotly's own start-up is page load, not boot
    page.evaluate("window.longTasks = []")
    page.evaluate("() => window.runbookCalculator.start()")
    wait_for_python(page)
    for value in ("4096", "8192", "16384", "32768"):
        assert set_inputs(page, context_limit=value) == "computed"
    tasks = page.evaluate("window.longTasks")
    assert max(tasks, default=0) < LONG_TASK_LIMIT_MS, tasks


def test_racing_inputs_end_on_the_last_one(booted):
    page = booted.page
    reset(page)
    field = page.locator(f"{CALC} [name=context_limit]")
    for value in ("1", "12", "123", "1234", "12345", "4096"):
        field.fill(value)
    assert settle(page) == "computed"
    expected = CAPACITY.run({**CAPACITY.defaults, "context_limit": "4096"}, None, ["ladder.users_worst"])["refs"]
    assert shown(page, "ladder.users_worst") == expected["ladder.users_worst"][0]


# What a second hostile reading found

def test_a_paste_of_escaped_quotes_is_read_in_linear_time():
    from calc.fields import nesting_depth
    import time
    started = time.perf_counter()
    nesting_depth('"' + '\\"' * 99_999)
    assert time.perf_counter() - started < 0.5


def test_escaped_quotes_do_not_stall_the_page(booted):
    page = booted.page
    reset(page)
    started = page.evaluate("performance.now()")
    assert paste_config(page, '"' + '\\"' * 99_999) == "invalid"
    assert page.evaluate("performance.now()") - started < 5_000
    assert "not valid JSON" in error_for(page, "config")


def test_the_bars_agree_with_the_ladder(booted):
    page = booted.page
    reset(page)
    assert set_inputs(page, card="b200", context_limit="8200") == "computed"
    gqa = page.text_content("figure.bars [data-ref='levers.gqa.users']")
    assert gqa == shown(page, "ladder.users_worst")
    users = [int(page.text_content(f"figure.bars [data-ref='levers.{step}.users']").replace(",", ""))
             for step in ("multi_head", "gqa", "fp8_cache", "paging")]
    assert users == sorted(users)


def test_print_says_what_the_figures_were_computed_for(booted):
    page = booted.page
    reset(page)
    assert set_inputs(page, card="h200-sxm", context_limit="16384") == "computed"
    page.emulate_media(media="print")
    try:
        assert page.is_visible(f"{CALC} .calc-inputs")
        printed = page.text_content(f"{CALC} [data-inputs]")
        assert "H200" in printed and "16,384 tokens" in printed
        assert not page.is_visible(f"{CALC} .calc-status")
    finally:
        page.emulate_media(media="screen")
    assert set_inputs(page, utilisation="2") == "invalid"
    page.emulate_media(media="print")
    try:
        assert page.is_visible(f"{CALC} .calc-status"), "an invalid input is said on paper too"
    finally:
        page.emulate_media(media="screen")


def test_characters_are_counted_as_python_counts_them(booted):
    page = booted.page
    reset(page)
    config = json.dumps({**LLAMA_3_1_8B_CONFIG, "note": "🙂" * 120_000}, ensure_ascii=False)
    assert len(config) < 200_000 < len(config.encode("utf-16-le")) // 2
    assert paste_config(page, config) == "computed"


@pytest.mark.parametrize("change, says", [
    ({"tie_word_embeddings": "true"}, 'tie_word_embeddings: expected true or false, got "true"'),
    ({"hidden_size": "4096"}, 'hidden_size: expected a whole number, got "4096"'),
    ({"use_sliding_window": "false"}, 'use_sliding_window: expected true or false, got "false"'),
])
def test_config_values_are_quoted_as_pasted(booted, change, says):
    page = booted.page
    reset(page)
    assert paste_config(page, json.dumps({**LLAMA_3_1_8B_CONFIG, **change})) == "invalid"
    assert error_for(page, "config") == says


def test_a_byte_order_mark_is_ignored_and_json_errors_read_well(booted):
    page = booted.page
    reset(page)
    assert paste_config(page, "\ufeff" + json.dumps(LLAMA_3_1_8B_CONFIG)) == "computed"
    assert paste_config(page, '{"hidden_size": "40') == "invalid"
    assert "at at" not in error_for(page, "config") and "(line 1, column" in error_for(page, "config")


def test_an_unconfirmed_config_waits_for_its_button(booted):
    page = booted.page
    reset(page)
    assert paste_config(page, json.dumps(LLAMA_3_1_70B_CONFIG)) == "computed"
    page.fill(f"{CALC} textarea[name=config]", "{ not json")
    assert set_inputs(page, card="h200-sxm") == "computed"
    assert shown(page, "params.total") == "70,553,706,496"


def test_figures_outside_the_calculator_dim_when_its_input_is_invalid(booted):
    page = booted.page
    reset(page)
    assert set_inputs(page, context_limit="zero") == "invalid"
    assert page.get_attribute("figure.bars >> xpath=..", "data-calc-state") == "invalid"
    assert set_inputs(page, context_limit="8192") == "computed"
    assert page.get_attribute("figure.bars >> xpath=..", "data-calc-state") == "computed"


def test_enormous_configs_still_fit_a_phone(hostile):
    watched = hostile(viewport=(390, 844))
    page = watched.page
    huge = {**LLAMA_3_1_8B_CONFIG, **{k: 10_000_000 for k in ("hidden_size", "intermediate_size", "num_hidden_layers",
                                                                "vocab_size", "num_attention_heads")},
            "num_key_value_heads": 10_000_000, "head_dim": 10_000_000}
    assert paste_config(page, json.dumps(huge)) == "computed"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert "first time only" not in status(page)
