"""Serve the explorer's static files as API Gateway (HTTP API, payload 2.0) answers.

Only the files shipped in static/ are served, looked up by name in a table built at
import: no path from a request ever reaches the file system. The page holds no data;
every data call it makes goes to the API with the person's credential.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATIC = Path(__file__).parent / "static"
UI_PATH = "/ui"

# Scripts and styles only from this origin (no inline script, no eval), data only from
# this API; nothing may frame the page.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
    ".ico": "image/x-icon",
}
_TEXT = {".html", ".js", ".css", ".svg", ".txt"}


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    content_type: str
    etag: str
    cache_control: str
    text: bool
    # The gzip variant of a text worth compressing (the graph library: 441 KB, 130 KB
    # gzipped), sent to a browser that accepts it; API Gateway does not compress.
    gzipped: bytes | None = None

    def variant_etag(self) -> str:
        return self.etag[:-1] + '-gzip"'


def _cache_control(relative: str) -> str:
    # Vendored files carry their version in the name: cached for good. The page and
    # its own scripts are revalidated each time (a 304 when unchanged), so an upgrade
    # is seen at the next load.
    if relative.startswith("vendor/"):
        return "public, max-age=31536000, immutable"
    return "no-cache"


def _gzipped(body: bytes) -> bytes | None:
    if len(body) < 1024:
        return None
    packed = gzip.compress(body, compresslevel=9, mtime=0)
    return packed if len(packed) < len(body) else None


def _load() -> dict[str, Asset]:
    assets: dict[str, Asset] = {}
    for path in sorted(STATIC.rglob("*")):
        if not path.is_file() or path.suffix not in _TYPES or path.name == "README.md":
            continue
        relative = path.relative_to(STATIC).as_posix()
        body = path.read_bytes()
        assets[relative] = Asset(
            body=body,
            content_type=_TYPES[path.suffix],
            etag='"' + hashlib.sha256(body).hexdigest()[:32] + '"',
            cache_control=_cache_control(relative),
            text=path.suffix in _TEXT,
            gzipped=_gzipped(body) if path.suffix in _TEXT else None,
        )
    return assets


ASSETS = _load()


def _headers(extra: dict[str, str]) -> dict[str, str]:
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        **extra,
    }


def _not_found() -> dict[str, Any]:
    return {
        "statusCode": 404,
        "headers": _headers({"Content-Type": "application/json", "Cache-Control": "no-store"}),
        "body": '{"error": {"code": "not_found", "message": "no such route"}}',
        "isBase64Encoded": False,
    }


def asset_name(path: str) -> str | None:
    """The static file a request path names: /ui is the page, /ui/<file> a file."""
    if path in (UI_PATH, UI_PATH + "/"):
        return "index.html"
    if path.startswith(UI_PATH + "/"):
        return path[len(UI_PATH) + 1 :]
    return None


def respond(event: dict[str, Any]) -> dict[str, Any]:
    """The answer to a GET of the page, one of its files, or / (sent to the page); to a
    HEAD, the same answer without its body."""
    answer = _respond(event)
    method = str((event.get("requestContext") or {}).get("http", {}).get("method", "GET"))
    if method.upper() == "HEAD":
        return {**answer, "body": "", "isBase64Encoded": False}
    return answer


def _respond(event: dict[str, Any]) -> dict[str, Any]:
    path = str(
        event.get("rawPath")
        or (event.get("requestContext") or {}).get("http", {}).get("path")
        or ""
    )
    if path in ("", "/"):
        return {
            "statusCode": 302,
            "headers": _headers({"Location": UI_PATH, "Cache-Control": "no-cache"}),
            "body": "",
            "isBase64Encoded": False,
        }
    name = asset_name(path)
    asset = ASSETS.get(name) if name else None
    if asset is None:
        return _not_found()
    sent = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    packed = asset.gzipped if "gzip" in sent.get("accept-encoding", "").lower() else None
    etag = asset.variant_etag() if packed else asset.etag
    extra = {"Content-Type": asset.content_type, "Cache-Control": asset.cache_control, "ETag": etag}
    if asset.gzipped:
        extra["Vary"] = "Accept-Encoding"
    if packed:
        extra["Content-Encoding"] = "gzip"
    headers = _headers(extra)
    if etag in sent.get("if-none-match", "").split(", "):
        return {"statusCode": 304, "headers": headers, "body": "", "isBase64Encoded": False}
    if packed or not asset.text:
        return {
            "statusCode": 200,
            "headers": headers,
            "body": base64.b64encode(packed or asset.body).decode("ascii"),
            "isBase64Encoded": True,
        }
    return {
        "statusCode": 200,
        "headers": headers,
        "body": asset.body.decode("utf-8"),
        "isBase64Encoded": False,
    }
