"""Screenshots of each page of the memory explorer for docs/ (`make screenshots`):
a real `taisce serve` with the demo memory, headless Chromium at a laptop's size."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from taisce import demo
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, PHONE, VIEWPORT, _browser_missing
from tests.draining import drain
from tests.server import ROOT, start_server

OUT = ROOT / "docs"


def main() -> int:
    missing = _browser_missing()
    if missing:
        print(f"no screenshots: {missing}")
        return 1
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as data:
        # The local model, as `make run` has it: the recall shows passages too.
        server = start_server(Path(data), {"TAISCE_EMBEDDINGS": "local"})
        drain(server)
        try:
            secret = server.new_credential("demo")
            with server.client(secret) as http:
                http.post("/v1/messages", json={"messages": demo.MESSAGES}).raise_for_status()
                http.post("/v1/facts", json={"facts": demo.FACTS}).raise_for_status()
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport=VIEWPORT)
                page.goto(server.url + "/ui")
                page.fill("#credential", secret)
                page.click("#use-credential")
                page.locator("#entities tbody tr").first.wait_for()
                shoot(page, "ui-entities.png")
                page.evaluate("location.hash = '#/entity?name=Acme%20Corp&hops=2'")
                page.wait_for_selector("#graph[data-ready]")
                page.wait_for_timeout(300)
                shoot(page, "ui-entity.png")
                page.evaluate("location.hash = '#/messages'")
                page.locator("#messages article").first.wait_for()
                shoot(page, "ui-messages.png")
                page.evaluate("location.hash = '#/search?q=Galway'")
                page.locator("#search-results").wait_for()
                shoot(page, "ui-search.png")
                page.evaluate("location.hash = '#/recall'")
                page.fill("#question", demo.FIRST_RECALL["question"])
                page.fill("#max_characters", "600")
                page.select_option("#hops", "2")
                page.uncheck("#roles_default")
                page.check("#role-tool")
                page.click("#recall-form button[type=submit]")
                page.locator("#bundle").wait_for()
                shoot(page, "ui-recall.png")
                page.evaluate("location.hash = '#/entity?name=Liam%20Walsh'")
                page.wait_for_selector("#graph[data-ready]")
                page.wait_for_timeout(300)
                page.click("#erase")
                page.locator("#erase-dialog").wait_for(state="visible")
                shoot(page, "ui-erase.png", full=False)
                page.click("#erase-confirm")
                page.locator("#erase-counts").wait_for()
                shoot(page, "ui-erased.png", full=False)
                # A phone: the recall with each item's why in plain words.
                phone = browser.new_page(viewport=PHONE)
                phone.goto(server.url + "/ui")
                phone.fill("#credential", secret)
                phone.click("#use-credential")
                phone.locator("#entities tbody tr").first.wait_for()
                phone.evaluate("location.hash = '#/recall'")
                phone.fill("#question", demo.FIRST_RECALL["question"])
                phone.select_option("#hops", "2")
                phone.uncheck("#roles_default")
                phone.check("#role-tool")
                phone.check("#explain")
                phone.click("#recall-form button[type=submit]")
                phone.locator("#bundle").wait_for()
                phone.locator("#bundle").scroll_into_view_if_needed()
                shoot(phone, "ui-phone-recall.png", full=False)
                browser.close()
        finally:
            server.stop()
    return 0


def shoot(page: object, name: str, full: bool = True) -> None:
    page.screenshot(path=str(OUT / name), full_page=full)  # type: ignore[attr-defined]
    print(f"wrote docs/{name}")


if __name__ == "__main__":
    sys.exit(main())
