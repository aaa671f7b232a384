"""One kind of failure for anything wrong in content: it names the file and the line."""
from __future__ import annotations

import re
from pathlib import Path


class ContentError(Exception):
    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = Path(path)
        self.line = line
        self.message = message


def toml_error_line(err: Exception) -> int:
    """tomllib puts the line in its message ('… (at line 3, column 5)') before Python 3.14."""
    found = re.search(r"at line (\d+)", str(err))
    return int(found.group(1)) if found else getattr(err, "lineno", 1) or 1
