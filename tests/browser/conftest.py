"""Headless Chromium (Debian's `chromium`, installed by `make browser`) driven by
Playwright, against a real `taisce serve` holding the demo memory.

Playwright's own browser download is never used: the browser is the system's, at
TAISCE_CHROMIUM (default /usr/bin/chromium). Where it is absent the tests skip, saying
how to install it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce import demo
from tests.draining import drain
from tests.server import LocalServer, start_server, wait_for_worker

CHROMIUM = os.environ.get("TAISCE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1366, "height": 800}  # a laptop screen


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python playwright is not installed (make install)"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return (
            f"no Chromium at {CHROMIUM}: run `make browser` (apt-get install chromium) "
            "or set TAISCE_CHROMIUM"
        )
    return None


@dataclass
class Demo:
    server: LocalServer
    secret: str

    @property
    def url(self) -> str:
        return self.server.url

    def api(self) -> httpx.Client:
        return self.server.client(self.secret)


# One server for every file here (a test worker's whole session: the worker runs these
# files between others, and a package-scoped server was started again each time it
# came back, seconds each on a busy machine); the tests that change memory use a
# project of their own. The browser is package-scoped: Playwright's sync API keeps an
# event loop running in this thread until it stops, and the async tests of the files
# after these could not run their own.
@pytest.fixture(scope="session")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """`taisce serve` with the demo memory (as `make run` loads it) in a project, and the
    local embedding model (as `make run` has it), so that recalls find passages too."""
    server = start_server(
        Path(tmp_path_factory.mktemp("browser-data")), {"TAISCE_EMBEDDINGS": "local"}
    )
    drain(server)
    secret = server.new_credential("demo")
    with server.client(secret) as http:
        assert http.post("/v1/messages", json={"messages": demo.MESSAGES}).status_code == 202
        assert http.post("/v1/facts", json={"facts": demo.FACTS}).status_code == 201
        # Indexed: the demo's facts are one bulk write, which the worker indexes moments later.
        wait_for_worker(http, message="the demo memory was not indexed in time")
    yield Demo(server, secret)
    server.stop()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        pytest.skip(f"browser tests skipped: {missing}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, demo_server: Demo) -> Iterator[Any]:
    """A fresh tab (its own session storage). Every request URL it makes and every
    console line is kept, to check the credential never appears in them."""
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    tab.seen_urls = []
    tab.console_lines = []
    tab.on("request", lambda r: tab.seen_urls.append(r.url))
    tab.on("console", lambda m: tab.console_lines.append(f"{m.type}: {m.text}"))
    tab.on("pageerror", lambda e: tab.console_lines.append(f"pageerror: {e}"))
    yield tab
    context.close()


PHONE = {"width": 390, "height": 844}
SIZES = {"desktop": VIEWPORT, "phone": PHONE}


@pytest.fixture(params=sorted(SIZES))
def sized(browser: Any, demo_server: Demo, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh tab at one of the two sizes, keeping what `page` keeps."""
    context = browser.new_context(viewport=SIZES[request.param])
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    tab.seen_urls = []
    tab.on("request", lambda r: tab.seen_urls.append(r.url))
    tab.console_lines = []
    tab.on("console", lambda m: tab.console_lines.append(f"{m.type}: {m.text}"))
    tab.on("pageerror", lambda e: tab.console_lines.append(f"pageerror: {e}"))
    yield tab
    context.close()
