"""Page weight and first render of the memory explorer at DevTools' "Fast 3G" (a
measurement for docs/explorer.md, not a test): `python -m tests.browser.weight`.

A real `taisce serve` with the demo memory, Debian's Chromium with its cache off; each
view is loaded fresh with the credential already in the tab, and timed from navigation
to its content on screen."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from taisce import demo
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, _browser_missing
from tests.draining import drain
from tests.server import start_server

# DevTools' "Fast 3G": 562.5 ms round trip, 1.44 Mbit/s down, 675 kbit/s up.
FAST_3G = {
    "offline": False,
    "latency": 562.5,
    "downloadThroughput": 1.44e6 / 8,
    "uploadThroughput": 675e3 / 8,
}
VIEWS = (("#/entities", "#entities tbody tr"), ("#/entity?name=Atlas", "#graph[data-ready]"))


def measure(browser: Any, url: str, secret: str, route: str, ready: str) -> str:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(f"sessionStorage.setItem('taisce.credential', {secret!r})")
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", FAST_3G)
    sizes: dict[str, int] = {}
    cdp.on(
        "Network.loadingFinished",
        lambda e: sizes.__setitem__(e["requestId"], e["encodedDataLength"]),
    )
    started = time.perf_counter()
    page.goto(url + "/ui" + route)
    page.wait_for_selector(ready, timeout=60_000)
    elapsed = time.perf_counter() - started
    page.wait_for_timeout(500)  # the last responses' sizes
    context.close()
    weight = sum(sizes.values()) / 1024
    return f"{route}: {weight:.0f} KB in {len(sizes)} requests, shown after {elapsed:.1f} s"


def main() -> int:
    missing = _browser_missing()
    if missing:
        print(f"not measured: {missing}")
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as data:
        server = start_server(Path(data))
        drain(server)
        try:
            secret = server.new_credential("demo")
            with server.client(secret) as http:
                http.post("/v1/messages", json={"messages": demo.MESSAGES}).raise_for_status()
                http.post("/v1/facts", json={"facts": demo.FACTS}).raise_for_status()
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for route, ready in VIEWS:
                    print(measure(browser, server.url, secret, route, ready))
                browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
