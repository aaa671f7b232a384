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


def read_text(path: Path) -> str:
    """A content file as text; one that is not UTF-8 is a content fault at the line it breaks on."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise ContentError(path, line, f"not UTF-8: byte 0x{data[err.start]:02x} cannot start or continue a character "
                                       "(save the file as UTF-8)") from None
