"""Drill mode: a seeded, repeatable case; each figure asked in turn and checked by calc."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from calc.calculators import CAPACITY
from conftest import booted_page


@pytest.fixture(scope="module")
def drill_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "06", "capacity")


def _draw(page, seed: str):
    panel = page.locator("[data-drill=capacity]")
    if not panel.evaluate("node => node.open"):
        panel.locator("summary").click()
    panel.locator("input[name=drill-seed]").fill(seed)
    panel.locator("[data-drill-action=repeat]").click()
    expect(panel.locator(".drill-case")).to_have_text(re.compile(r"^Case \d+"), timeout=60_000)
    expect(panel.locator(".drill-question")).to_be_visible()
    return panel


def test_a_seed_draws_the_same_case_every_time(drill_page):
    page = drill_page.page
    first = _draw(page, "12345").get_attribute("data-case")
    case_line = page.text_content("[data-drill=capacity] .drill-case")
    again = _draw(page, "12345").get_attribute("data-case")
    assert first == again and json.loads(first)["card"]
    assert case_line.startswith("Case 1234")
    other = _draw(page, "777").get_attribute("data-case")
    assert other != first


def test_answers_are_checked_by_calc_and_a_miss_shows_the_worked_step(drill_page):
    page = drill_page.page
    panel = _draw(page, "2024")
    values = json.loads(panel.get_attribute("data-case"))
    path = panel.locator(".drill-question").get_attribute("data-asking")
    truth, worked = CAPACITY.run({**CAPACITY.defaults, **values}, None, [path])["refs"][path]
    number = truth.split()[0].replace(",", "")
    panel.locator("input[name=drill-answer]").fill(number)
    panel.locator("button[type=submit]").click()
    expect(panel.locator(".drill-feedback")).to_have_text(f"Right: {truth}.")

    path = panel.locator(".drill-question").get_attribute("data-asking")
    truth, worked = CAPACITY.run({**CAPACITY.defaults, **values}, None, [path])["refs"][path]
    panel.locator("input[name=drill-answer]").fill("not a number <b>")
    panel.locator("button[type=submit]").click()
    assert "Type a number" in panel.locator(".drill-feedback").text_content()
    assert panel.locator(".drill-question").get_attribute("data-asking") == path, "a garbled answer is not a miss"
    assert panel.locator(".drill-feedback b").count() == 0
    wrong = float(truth.split()[0].replace(",", "")) * 3 + 7
    panel.locator("input[name=drill-answer]").fill(str(wrong))
    panel.locator("button[type=submit]").click()
    feedback = panel.locator(".drill-feedback").text_content()
    assert feedback.startswith("Not quite") and f"calc says {truth}" in feedback and worked in feedback
    assert panel.locator(".drill-score").text_content() == "Score: 1 of 2 right."


def test_a_bad_seed_is_refused_in_words(drill_page):
    page = drill_page.page
    panel = page.locator("[data-drill=capacity]")
    panel.locator("input[name=drill-seed]").fill("-4")
    panel.locator("[data-drill-action=repeat]").click()
    assert panel.locator(".drill-case").text_content() == "A seed is a whole number from 0 to 4,294,967,295."
    assert panel.locator("input[name=drill-seed]").get_attribute("aria-invalid") == "true"
