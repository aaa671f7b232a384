"""`::: fast-answers`: each `### question` and the answer under it become one pair."""
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from .base import Container, add_container, container_span, is_container


def fast_answer_pairs(state: StateCore) -> None:
    out: list[Token] = []
    tokens = state.tokens
    i = 0
    while i < len(tokens):
        if not is_container(tokens[i], "fast-answers"):
            out.append(tokens[i])
            i += 1
            continue
        span = container_span(tokens, i)
        opener, inside, closer = tokens[span.start], tokens[span.start + 1:span.stop - 1], tokens[span.stop - 1]
        out.append(opener)
        in_pair = False
        for token in inside:
            if token.type == "heading_open" and token.level == opener.level + 1:
                if in_pair:
                    out.append(Token("fast_answer_close", "div", -1))
                pair = Token("fast_answer_open", "div", 1)
                pair.attrSet("class", "fast-answer")
                out.append(pair)
                in_pair = True
            out.append(token)
        if in_pair:
            out.append(Token("fast_answer_close", "div", -1))
        out.append(closer)
        i = span.stop
    state.tokens = out


def plugin(md) -> None:
    add_container(md, Container("fast-answers", lambda t, g, token, env: '<div class="fast-answers">', "</div>"))
    md.core.ruler.push("fast_answer_pairs", fast_answer_pairs)
