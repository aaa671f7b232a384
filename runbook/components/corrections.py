"""`:::: corrections` around `::: correction What was said`: the corrections a document makes. Each
gets an id from its claim (`was-…`), so the register (document 00) can link to it."""
from markdown_it.rules_core import StateCore

from .base import Container, add_container, is_container, slug, unique


def correction_ids(state: StateCore) -> None:
    used = {t.attrGet("id") for t in state.tokens if t.attrGet("id")}
    for token in state.tokens:
        if is_container(token, "correction"):
            token.attrSet("id", unique("was-" + "-".join(slug(token.meta["args"]).split("-")[:8]), used))


def plugin(md) -> None:
    add_container(md, Container("corrections", lambda t, g, token, env: '<div class="corrections">', "</div>"))
    add_container(md, Container("correction", lambda t, g, token, env:
                                f'<article class="card correction"><p class="eyebrow">Was</p><h4>{t}</h4>', "</article>"))
    md.core.ruler.push("correction_ids", correction_ids)
