"""The Bedrock and OpenSearch data planes as the adapters see them, for runs that record
which calls each function makes (tests/aws_calls.py) where neither service can run.

`Collection` answers opensearch-py's requests in the shapes of the recordings in
tests/recordings/opensearch (index creation, `_bulk` with service-assigned `_id`s,
`_search` with `term`/`terms` filters, k-NN or match), holding the documents in memory;
`titan_answer` is InvokeModel's answer for Titan Text Embeddings v2
(tests/recordings/bedrock): a unit vector derived from the text, so equal texts embed
equally.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
from typing import Any

from opensearchpy.exceptions import RequestError


def titan_answer(params: dict[str, Any]) -> dict[str, Any]:
    request = json.loads(params["body"])
    dimensions = int(request.get("dimensions", 1024))
    seed = hashlib.sha256(request["inputText"].encode()).digest()
    raw = [((seed[i % len(seed)] + i * 7) % 251) - 125.0 for i in range(dimensions)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    body = json.dumps({"embedding": [x / norm for x in raw], "inputTextTokenCount": 1})
    return {
        "body": io.BytesIO(body.encode()),
        "contentType": "application/json",
        "ResponseMetadata": {"HTTPStatusCode": 200, "RequestId": "fake"},
    }


def _matches(source: dict[str, Any], clause: dict[str, Any]) -> bool:
    if "term" in clause:
        ((field, value),) = clause["term"].items()
        return bool(source.get(field) == value)
    if "terms" in clause:
        ((field, values),) = clause["terms"].items()
        return source.get(field) in values
    if "bool" in clause:
        return all(_matches(source, c) for c in clause["bool"].get("filter", []))
    return True


def _filters(query: dict[str, Any]) -> list[dict[str, Any]]:
    if "knn" in query:
        knn = next(iter(query["knn"].values()))
        return [knn.get("filter", {})]
    inner = query.get("bool", {})
    return list(inner.get("filter", []))


class Collection:
    """One OpenSearch Serverless collection's documents, by `_id`."""

    def __init__(self) -> None:
        self.documents: dict[str, dict[str, Any]] = {}
        self.indexes: set[str] = set()
        # Each index's mapping as created (its vector field's dimension is checked).
        self.mappings: dict[str, Any] = {}
        self._ids = (f"1%{n:019d}" for n in itertools.count(1))

    def answer(self, method: str, url: str, body: Any) -> Any:
        path = url.split("?", 1)[0].strip("/").split("/")
        if path[-1] == "_bulk":
            return self._bulk(body if isinstance(body, str) else body.decode())
        if path[-1] == "_search":
            return self._search(body if isinstance(body, dict) else json.loads(body))
        if path[-1] == "_mapping" and method == "GET" and path[0] in self.indexes:
            return {path[0]: {"mappings": self.mappings[path[0]]}}
        if len(path) == 1 and method == "PUT":
            created = path[0] not in self.indexes
            self.indexes.add(path[0])
            if created:
                given = json.loads(body) if isinstance(body, str | bytes) else body
                self.mappings[path[0]] = given["mappings"]
                return {"acknowledged": True, "index": path[0]}
            error = {"type": "resource_already_exists_exception"}
            raise RequestError(400, error["type"], {"error": error, "status": 400})
        if len(path) == 1 and method in ("GET", "HEAD"):
            return {path[0]: {"mappings": {}}} if path[0] in self.indexes else {}
        raise AssertionError(f"no fake answer for {method} {url}")

    def _bulk(self, body: str) -> dict[str, Any]:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        items: list[dict[str, Any]] = []
        while lines:
            action = lines.pop(0)
            if "delete" in action:
                doc_id = action["delete"]["_id"]
                found = self.documents.pop(doc_id, None) is not None
                items.append({"delete": {"_id": doc_id, "status": 200 if found else 404}})
            else:
                doc_id = next(self._ids)
                self.documents[doc_id] = lines.pop(0)
                items.append({"index": {"_id": doc_id, "status": 201}})
        return {"took": 1, "errors": False, "items": items}

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        filters = _filters(body.get("query", {}))
        hits = [
            {"_id": doc_id, "_score": 1.0, "_source": source}
            for doc_id, source in self.documents.items()
            if all(_matches(source, f) for f in filters)
        ]
        return {"hits": {"total": {"value": len(hits)}, "hits": hits[: body.get("size", 10)]}}

    def items(self, kind: str) -> set[str]:
        """The item ids of one kind with a document in the collection."""
        return {s["item_id"] for s in self.documents.values() if s.get("kind") == kind}
