"""The dialect's components, one module each. Each is a markdown-it plugin, `def plugin(md)`, that
registers what the component needs: its parse rule if it has one, its check (run by the compute
stage), and how it is drawn (a template in templates/components/, or the HTML around what it
wraps). runbook/components/base.py holds what they share."""
from . import (analogy, ask_them, calculator, callout, cards, chart, corrections, fast_answers, figure, formula, forms,
               ladder, levers, live, note, question, reference, register, split, spoken, tokenizer, versus, worked)

PLUGINS = [module.plugin for module in (
    reference,
    forms, cards, question, callout, analogy, versus, spoken, fast_answers, ask_them, corrections, live, figure,
    formula, worked, ladder, levers, split, chart, calculator, tokenizer, note, register,
)]
