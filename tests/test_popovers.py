"""Every number explains itself: a popover with its formula, arithmetic, inputs, source and home,
by click, tap or keyboard, before Python starts and after a calculator recomputes."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from calc.calculators import CAPACITY
from calc.facts import facts
from calc.core.present import resolve
from conftest import Calculator, booted_page

DOC = "06-kv-cache.html"
FACTS = facts()


@pytest.fixture
def page(watched):
    page = watched.page
    page.goto(watched.url_of(DOC, "#deep"))
    return page


def _popover(page) -> str:
    expect(page.locator("#number-popover")).to_be_visible()
    return page.text_content("#number-popover")


def test_a_sample_of_numbers_shows_calcs_own_arithmetic(page):
    paths = page.eval_on_selector_all(".form-deep .ref[data-ref]:not([data-ref*='|'])",
                                      "nodes => [...new Set(nodes.map(n => n.dataset.ref))]")
    sample = [p for p in paths if getattr(resolve(FACTS, p), "worked", "")][:25]
    assert len(sample) >= 20
    for path in sample:
        page.locator(f".form-deep .ref[data-ref='{path}']").first.click()
        text = _popover(page)
        result = resolve(FACTS, path)
        assert result.worked in text, path
        if result.formula:
            assert result.formula in text, path
        page.keyboard.press("Escape")


def test_inputs_walk_back_to_the_datasheet_and_return(page):
    page.locator(".form-deep .ref[data-ref='ladder.users_worst']").first.click()
    assert "Derived in document 06" in _popover(page)
    inputs = page.locator(".popover-input")
    # users = ⌊blocks × block ÷ tokens per user⌋: the capacity in whole blocks, then the blocks counted
    blocks = FACTS["ladder"].accounting.blocks
    assert inputs.count() == 2 and "blocks × block" in inputs.first.text_content()
    inputs.first.click()
    assert f"{blocks} × {FACTS['ladder'].stack.block_size} =" in _popover(page)
    page.locator(".popover-input", has_text="blocks").first.click()
    assert blocks.worked in _popover(page)
    page.click(".popover-back")
    page.click(".popover-back")
    assert resolve(FACTS, "ladder.users_worst").worked in _popover(page)


def test_the_pool_leads_to_cudas_total_and_its_source(page):
    page.locator(".form-deep .ref[data-ref='ladder.pool']").first.click()
    assert "Derived in document 06" in _popover(page)
    page.locator(".popover-input", has_text="cuda capacity").first.click()
    text = _popover(page)
    assert "79.19 GiB" in text and "Source: vLLM 0.19.0's start-up log" in text


def test_the_keyboard_opens_enters_and_closes_the_popover(page):
    first = page.locator(".ref").first
    first.focus()
    expect(page.locator("#number-popover")).to_be_visible()
    assert first.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Enter")
    assert page.evaluate("document.getElementById('number-popover').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(page.locator("#number-popover")).to_be_hidden()
    assert page.evaluate("document.activeElement.classList.contains('ref')")


def test_typed_text_never_becomes_markup_in_a_popover(page):
    page.locator(".form-deep .ref[data-ref='ladder.kv_budget']").first.click()
    assert page.locator("#number-popover script, #number-popover img").count() == 0


@pytest.fixture(scope="module")
def capacity_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "06", "capacity")


def test_after_a_recompute_the_popover_follows_the_calculator(capacity_page):
    page = capacity_page.page
    calculator = Calculator("capacity")
    assert calculator.set(page, card="h200-sxm") == "computed"
    expected = CAPACITY.run({**CAPACITY.defaults, "card": "h200-sxm"}, None, ["ladder.kv_budget"], [], False)
    node = page.locator("[data-live~=capacity] .ref[data-ref='ladder.kv_budget']").first
    node.click()
    text = _popover(page)
    assert expected["refs"]["ladder.kv_budget"][1] in text and expected["refs"]["ladder.kv_budget"][0] in text


def test_after_a_recompute_the_chain_is_the_readers_not_the_builds(capacity_page):
    """Llama 3.1 70B in int4 on the H100: the KV budget's popover lists the 70B's weights, computed by
    Python on the reader's inputs, not the 8B's from the build."""
    page = capacity_page.page
    calculator = Calculator("capacity")
    assert calculator.set(page, model="llama-3.1-70b", weights="int4") == "computed"
    values = {**CAPACITY.defaults, "model": "llama-3.1-70b", "weights": "int4"}
    mine = CAPACITY.run(values, None, [], [], False, ["ladder.kv_budget"])["facts"]
    weights = mine["ladder.accounting.weights"]["text"]
    assert weights != str(FACTS["ladder"].weights) and float(weights.split()[0]) > 30
    page.keyboard.press("Escape")
    page.locator("[data-live~=capacity] .ref[data-ref='ladder.kv_budget']").first.click()
    inputs = page.locator("#number-popover .popover-input")
    expect(inputs.filter(has_text="weights")).to_contain_text(weights)
    expect(page.locator("#number-popover")).not_to_contain_text(str(FACTS["ladder"].weights))
    inputs.filter(has_text="weights").first.click()
    expect(page.locator("#number-popover .popover-worked")).to_contain_text(mine["ladder.accounting.weights"]["worked"])


def test_python_explains_a_recomputed_figure_by_what_it_used():
    """The calculator's explanation on the reader's stack: every input it lists is explained in turn,
    and the 70B's pool is the same card's pool as the 8B's."""
    values = {**CAPACITY.defaults, "model": "llama-3.1-70b", "weights": "int4"}
    facts_70b = CAPACITY.run(values, None, [], [], False, ["ladder.kv_budget"])["facts"]
    budget = facts_70b["ladder.kv_budget"]
    assert budget["inputs"][:2] == ["ladder.accounting.pool", "ladder.accounting.weights"]
    assert all(path in facts_70b for entry in facts_70b.values() for path in entry["inputs"])
    assert facts_70b["ladder.accounting.pool"]["text"] == str(FACTS["ladder"].pool)
    assert "stack.model.vocab_size" in facts_70b and facts_70b["stack.model.vocab_size"]["text"] == "128,256"


def test_the_headline_chain_reaches_the_config_fields_it_multiplies():
    """The chain from the users a card holds walks back, through what each computation used, to the
    config and the datasheet."""
    from calc.core.present import leaves
    from runbook.provenance import Provenance
    provenance = Provenance(leaves(FACTS), FACTS)
    assert provenance.inputs("ladder.per_token") == [
        "stack.model.num_hidden_layers", "stack.model.num_key_value_heads", "stack.model.head_dim"]
    assert provenance.inputs("ladder.weights")[0] == "params.total"  # and the rotary table, an intermediate
    assert "rotary" in provenance.value(provenance.inputs("ladder.weights")[1]).formula
    chain = provenance.closure(["ladder.users_worst"])
    # the ladder's rungs are the engine's accounting, named where the walk first meets them
    assert {"ladder.accounting.available", "ladder.accounting.pool", "stack.card.cuda_capacity", "params.embedding",
            "stack.model.num_key_value_heads"} <= set(chain)


def test_every_derived_figure_records_what_it_was_made_of():
    """No figure's inputs are read off its printed text: each derived result (one whose worked line
    ends in ' = …') carries the results its computation used, or says it used none."""
    from calc.core.present import leaves
    from calc.core.units import Result
    for stack_facts in (FACTS, facts(CAPACITY.stack({**CAPACITY.defaults, "model": "llama-3.1-70b", "weights": "int4"})[0])):
        silent = [path for path, value in leaves(stack_facts) if isinstance(value, Result) and " = " in value.worked
                  and value.inputs is None and value.origin is None]
        assert silent == []
