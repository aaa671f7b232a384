"""`@note NAME | title`: a printable note, its body a template in templates/components/notes/,
drawn from references."""
from pathlib import Path

from .base import BadArguments, Directive, add_directive

NOTES = Path(__file__).resolve().parent.parent.parent / "templates" / "components" / "notes"


def check(args: str, namespace) -> dict[str, str]:
    known = sorted(p.name.removesuffix(".html.j2") for p in NOTES.glob("*.html.j2"))
    if args not in known:
        raise BadArguments(f"no note named '{args}' (known: {', '.join(known) or 'none'})")
    return {"name": args}


def plugin(md) -> None:
    add_directive(md, Directive("note", check, "components/note.html.j2"))
