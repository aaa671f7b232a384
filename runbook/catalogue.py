"""The runbook's table of contents: sixteen documents in five tracks (plus the start page)."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import ContentError, read_text, toml_error_line


@dataclass(frozen=True)
class Entry:
    number: str
    title: str
    file: str
    track_key: str
    track_name: str
    written: bool

    @property
    def output_name(self) -> str:
        return Path(self.file).with_suffix(".html").name


@dataclass(frozen=True)
class Track:
    key: str
    name: str
    summary: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Catalogue:
    title: str
    subtitle: str
    tracks: tuple[Track, ...]

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for t in self.tracks for e in t.entries)

    def entry(self, number: str) -> Entry | None:
        return next((e for e in self.entries if e.number == number), None)

    def neighbours(self, number: str) -> tuple[Entry | None, Entry | None]:
        entries = self.entries
        i = next(i for i, e in enumerate(entries) if e.number == number)
        return (entries[i - 1] if i > 0 else None, entries[i + 1] if i + 1 < len(entries) else None)


def read_catalogue(content: Path) -> Catalogue:
    path = content / "runbook.toml"
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as err:
        raise ContentError(path, toml_error_line(err), f"not valid TOML: {err}") from None
    tracks = []
    for track in data["tracks"]:
        entries = tuple(
            Entry(d["number"], d["title"], d["file"], track["key"], track["name"], (content / d["file"]).is_file())
            for d in track["documents"]
        )
        tracks.append(Track(track["key"], track["name"], track["summary"], entries))
    return Catalogue(data["title"], data["subtitle"], tuple(tracks))

