"""The README and docs/ hold together: every relative link and every repository path they
name resolves inside the repository, no page points outside it (a sibling folder, a
machine's own paths) or at an issue number, and the README stays a page a newcomer
reads in five minutes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LINES = 250

# Package paths in the docs are written from the package's folder (docs/architecture.md:
# "All package paths are under layers/core/taisce/"), so they resolve from there too.
# A path under a folder the sentence names resolves from that folder ("`functions/messages/
# app.py` (and `facts/app.py`)", "`adapters/` ... `dynamodb/client.py`").
BASES = (
    ROOT,
    ROOT / "layers" / "core" / "taisce",
    ROOT / "layers" / "core" / "taisce" / "adapters",
    ROOT / "layers" / "core",
    ROOT / "functions",
    ROOT / "clients" / "python" / "taisce_client",
)
# Paths the pages name that are not the repository's: files a run writes, another
# project's, a user's own settings.
ELSEWHERE = {
    "bench/data/quality-results.json",  # written by make bench-quality
    "data/locomo10.json",  # in LoCoMo's repository (docs/quality.md)
    ".cursor/mcp.json",  # a Cursor user's settings
    "taisce/local/stack",  # inside the built server wheel (docs/packages.md)
    ".dist-info/licenses",  # inside each built wheel
}

# Named by the README's Integrations section and written on branches merged beside this
# one; drop each entry once the path is in the tree.
PENDING: set[str] = set()

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# A path as the docs name one: two or more segments, a file's extension or a folder's
# trailing slash, nothing that reads as a placeholder or a pattern.
_PATH = re.compile(r"^[A-Za-z0-9_.][\w.-]*(?:/[\w.@+-]+)+(?:\.[a-z0-9]+|/)$")
_FILE_EXT = re.compile(r"\.(?:py|md|json|yaml|yml|toml|txt|png|svg|js|css|html|cfg|ini)$")
_ISSUE = re.compile(r"\bissues?\s*#?\d+", re.I)
_MACHINE_PATH = re.compile(r"(?<![\w.])(?:/root|/work|/home|/Users|/opt|/tmp|/mnt)/|[A-Z]:\\\\")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _resolves(target: str, page: Path) -> bool:
    clean = target.rstrip("/")
    if clean in PENDING or clean in ELSEWHERE:
        return True
    here = (page.parent / clean).resolve()
    if here.exists() and ROOT in (here, *here.parents):
        return True
    return any((base / clean).exists() for base in BASES)


def _slug(heading: str) -> str:
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    body = _FENCE.sub("", _text(page))
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", body, re.M)}


def _links(page: Path) -> list[str]:
    return [m.group(1) for m in _LINK.finditer(_FENCE.sub("", _text(page)))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z]+:", target) or target == "#":
            continue  # http(s), mailto: outside links are not files of the repository
        path, _, anchor = target.partition("#")
        if not path:
            if anchor and anchor not in _anchors(page):
                broken.append(target)
            continue
        if not _resolves(path, page):
            broken.append(target)
        elif anchor and path.endswith(".md"):
            file = (page.parent / path).resolve()
            if anchor not in _anchors(file):
                broken.append(target)
    assert broken == [], f"{page.name}: links that resolve to nothing: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_repository_path_named_exists(page: Path) -> None:
    missing = []
    for span in _CODE_SPAN.findall(_text(page)):
        for word in span.split():
            word = word.strip(",;:()")
            if not _PATH.match(word) or not (_FILE_EXT.search(word) or word.endswith("/")):
                continue
            if "://" in word or word.startswith(("v1/", "ui/")):
                continue
            if not _resolves(word, page):
                missing.append(word)
    assert missing == [], f"{page.name} names paths that are not in the repository: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_points_outside_the_project(page: Path) -> None:
    text = _text(page)
    assert "../shared" not in text, f"{page.name} names a folder outside the repository"
    issues = _ISSUE.findall(text)
    assert issues == [], f"{page.name} names issue numbers: {issues}"
    machine = [m.group() for m in _MACHINE_PATH.finditer(text)]
    assert machine == [], f"{page.name} names a machine's own paths: {machine}"


def test_the_readme_is_short() -> None:
    lines = _text(ROOT / "README.md").count("\n")
    assert lines <= README_LINES, f"README.md has {lines} lines; at most {README_LINES}"


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "[gone](nowhere.md) and `bench/nothing_here.py`, see ../shared/x, issue 12, /work/x/y\n",
        encoding="utf-8",
    )
    assert _links(page) == ["nowhere.md"] and not _resolves("nowhere.md", page)
    assert not _resolves("bench/nothing_here.py", page)
    assert _resolves("bench/quality_chart.py", page)
    assert _resolves("domain/names.py", page)  # a package path
    text = _text(page)
    assert _ISSUE.findall(text) == ["issue 12"]
    assert [m.group() for m in _MACHINE_PATH.finditer(text)] == ["/work/"]
    assert _slug("Report summaries written by a model") == "report-summaries-written-by-a-model"
    assert _slug("`sam local invoke`") == "sam-local-invoke"
