"""Every error the server can answer is in the OpenAPI description, under its status.

The (status, code) pairs are read from the source, not listed here: each error class
(`code = "..."`, `status = N`) and each error built in place (`error_reply(503,
"unavailable", ...)` and its kin). A new error added to the code without its
description fails here.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

from tests.server import ROOT

SOURCES = [ROOT / "layers" / "core" / "taisce", ROOT / "functions"]
DOCUMENT = ROOT / "docs" / "openapi.json"
# The functions that build an error answer from a status and a code in their arguments.
BUILDERS = {"error_reply", "error_response", "_raw_error"}
CODE = re.compile(r"[a-z]+(?:_[a-z]+)*")
# Answered for no operation: a path that is served, with a method it does not take.
NO_OPERATION = {"method_not_allowed"}


def _constants(nodes: list[ast.expr], kind: type) -> list[object]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and type(n.value) is kind]


def _from_call(node: ast.Call) -> tuple[int, str] | None:
    name = node.func.id if isinstance(node.func, ast.Name) else ""
    if name not in BUILDERS:
        return None
    statuses = _constants(node.args, int)
    codes = [c for c in _constants(node.args, str) if CODE.fullmatch(str(c))]
    if not statuses or not codes:
        return None  # a helper passing its own parameters on
    return int(str(statuses[0])), str(codes[0])


def _from_class(node: ast.ClassDef) -> tuple[int, str] | None:
    found: dict[str, object] = {}
    for statement in node.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
            for target in statement.targets:
                if isinstance(target, ast.Name) and target.id in ("code", "status"):
                    found[target.id] = statement.value.value
    if isinstance(found.get("code"), str) and isinstance(found.get("status"), int):
        return int(str(found["status"])), str(found["code"])
    return None


def emitted() -> Iterator[tuple[int, str, str]]:
    """(status, code, where) for every error the server's source can answer."""
    for folder in SOURCES:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                pair = None
                if isinstance(node, ast.Call):
                    pair = _from_call(node)
                elif isinstance(node, ast.ClassDef):
                    pair = _from_class(node)
                if pair is not None:
                    yield (*pair, f"{path.relative_to(ROOT)}:{node.lineno}")


def _document() -> dict[str, object]:
    loaded: dict[str, object] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return loaded


def _described(document: dict[str, object]) -> dict[str, str]:
    """Each status, with every description the document gives for it."""
    texts: dict[str, str] = {}
    for item in document["paths"].values():  # type: ignore[attr-defined]
        for operation in item.values():
            for status, response in operation["responses"].items():
                texts[status] = texts.get(status, "") + " " + response["description"]
    return texts


def test_the_source_scan_finds_the_errors_it_should() -> None:
    # The scan itself works: errors of each kind of source are found.
    found = {(status, code) for status, code, _ in emitted()}
    assert {(400, "invalid_request"), (413, "answer_too_large")} <= found  # classes
    assert {(503, "unavailable"), (408, "request_timeout"), (429, "rate_limited")} <= found
    assert (505, "http_version_not_supported") in found


def test_every_code_the_server_answers_is_in_the_error_schema() -> None:
    document = _document()
    schemas = document["components"]["schemas"]  # type: ignore[index]
    listed = set(schemas["ErrorDetail"]["properties"]["code"]["enum"])
    missing = {f"{code} ({where})" for _, code, where in emitted() if code not in listed}
    assert not missing, f"codes the server answers but ErrorCode does not list: {missing}"


def test_every_error_is_described_under_its_status() -> None:
    document = _document()
    texts = _described(document)
    overview = str(document["info"]["description"])  # type: ignore[index]
    missing = set()
    for status, code, where in emitted():
        if code in NO_OPERATION:
            described = f"{status} {code}" in overview
        else:
            described = re.search(rf"\b{code}\b", texts.get(str(status), "")) is not None
        if not described:
            missing.add(f"{status} {code} ({where})")
    assert not missing, f"errors the server answers but the description does not: {missing}"
