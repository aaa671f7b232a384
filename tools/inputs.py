#!/usr/bin/env python3
"""What each fact is made of, as its computation recorded it: for checking a module's results after
writing them with calc.core.arith.

    python3 tools/inputs.py ladder            every fact under ladder.*
    python3 tools/inputs.py ladder --missing  only the derived results that record no inputs

A result "records" when its inputs (or the config field it was read off) were captured by the
computation, even as none (a measured figure); a given records nothing and needs nothing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc.core.present import leaves  # noqa: E402
from calc.core.units import Result  # noqa: E402
from calc.facts import facts  # noqa: E402
from calc.core.provenance import Provenance  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefixes", nargs="*", help="fact paths or their beginnings (default: every fact)")
    parser.add_argument("--missing", action="store_true", help="only derived results that record no inputs")
    args = parser.parse_args(argv)
    namespace = facts()
    provenance = Provenance(leaves(namespace), namespace)
    for path, value in list(provenance.facts.items()):
        if args.prefixes and not any(path == p or path.startswith(p + ".") for p in args.prefixes):
            continue
        if not isinstance(value, Result):
            continue
        derived = " = " in value.worked
        if provenance.recorded(path):
            if args.missing:
                continue
            print(f"{path}  =  {value}\n    made of: {', '.join(provenance.inputs(path)) or '—'}")
        elif derived or not args.missing:
            print(f"{path}  =  {value}  [NOT RECORDED]\n    worked: {value.worked}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
