"""What is wrong with a refused request, in the API's own words.

Each error the request models raise becomes one sentence that names the field by its
path (`messages[0].content`, `query parameter limit`). No wording of the validation
library reaches a client: every error type the models can raise has its sentence
here, and a type without one is said generically ("is not valid"). An unknown field is
named, with what it was probably meant to be: a field of the same model spelled
alike, or the name other memory APIs use for it (HABITS).
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from ..domain.controls import RecallRequest
from ..domain.erasure import ErasureRequest
from ..domain.ingest import ID_PATTERN, FactIn, MessageIn

Error = dict[str, Any]

# A request that is wrong in many places gets this many sentences, then a count.
MAX_PROBLEMS = 10
# An unknown field's name is quoted at most this long.
MAX_NAME = 64

# Names other memory APIs use, per model, and what to say instead of a guess. Only
# where the meaning is the same; a name with no counterpart here is said as unknown.
# No hint holds "; ", which separates the problems of one message.
_END_USER = "did you mean 'user'? It is one per request, never per item"
HABITS: dict[type[BaseModel], dict[str, str]] = {
    RecallRequest: {
        "query": "did you mean 'question'?",
        "text": "did you mean 'question'?",
        "q": "did you mean 'question'?",
        "limit": "a recall is bounded by max_characters, and by max_rows items",
        "top_k": "a recall is bounded by max_characters, and by max_rows items",
        "k": "a recall is bounded by max_characters, and by max_rows items",
    },
    MessageIn: {
        "text": "did you mean 'content'?",
        "message": "did you mean 'content'?",
        "role_type": "did you mean 'role'?",
        "created_at": "did you mean 'occurred_at'?",
        "timestamp": "did you mean 'occurred_at'?",
    },
    # A graph memory's triple: source, relationship, destination.
    FactIn: {
        "source": "did you mean 'subject'?",
        "relationship": "did you mean 'predicate'?",
        "relation": "did you mean 'predicate'?",
        "destination": "did you mean 'object'?",
        "target": "did you mean 'object'?",
    },
    ErasureRequest: {"name": "did you mean 'subject'?", "entity": "did you mean 'subject'?"},
}
# Scopes other APIs take in any body; here the credential is the scope.
_ONE_PROJECT = "a credential is one project's memory: use a project per agent or session"
ANY_MODEL = {
    "user_id": _END_USER,
    "agent_id": _ONE_PROJECT,
    "run_id": _ONE_PROJECT,
    "session_id": _ONE_PROJECT,
}

# The shape of every client-given id, in words.
_PATTERNS = {ID_PATTERN: "must be 1-128 characters: letters, digits and . _ : @ -"}


def where(loc: Sequence[Any]) -> str:
    """A readable path to the bad value: messages[0].content, query parameter subject."""
    parts: list[str] = []
    for part in loc[1:]:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    text = "".join(parts)
    if loc and loc[0] in ("query", "path"):
        return f"{loc[0]} parameter {text}"
    return text or "the body"


def _quoted(name: object) -> str:
    text = str(name)
    return repr(text if len(text) <= MAX_NAME else text[:MAX_NAME] + "...")


def models_in(annotation: Any) -> Iterable[type[BaseModel]]:
    """The request models inside a field's type (list[FactIn] | None: FactIn)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from models_in(arg)


def model_at(root: type[BaseModel] | None, loc: Sequence[Any]) -> type[BaseModel] | None:
    """The model that holds the field at `loc` (("body", "facts", 0, "text"): FactIn)."""
    model = root
    for part in loc[1:-1]:
        if model is None:
            return None
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        model = next(iter(models_in(field.annotation)), None)
    return model


def unknown_field(name: object, model: type[BaseModel] | None, inside: str = "") -> str:
    """Why a field is refused, with what it was probably meant to be."""
    text = f"unknown field {_quoted(name)}{inside}"
    if model is None:
        return text
    hint = HABITS.get(model, {}).get(str(name)) or ANY_MODEL.get(str(name))
    if hint is None:
        known = list(model.model_fields)
        close = difflib.get_close_matches(str(name), known, n=1)
        if close:
            hint = f"did you mean {close[0]!r}?"
    return f"{text} ({hint})" if hint else text


def _items(n: object) -> str:
    return "1 item" if n == 1 else f"{n} items"


def _characters(n: object) -> str:
    return "1 character" if n == 1 else f"{n:,} characters" if isinstance(n, int) else f"{n}"


def _value_error(ctx: dict[str, Any], text: str) -> str:
    """A rule of the models' own validators: their messages are already plain words."""
    reason = str(ctx.get("error", "")).strip() or "is not valid"
    return f"{text} {reason}" if reason.startswith(("must ", "is ")) else f"{text}: {reason}"


def _expected(ctx: dict[str, Any]) -> str:
    return str(ctx.get("expected", "")).replace("' or '", "', '") or "the allowed values"


# error type -> the sentence after the field's path, from the error's context.
SENTENCES: dict[str, Callable[[dict[str, Any]], str]] = {
    "missing": lambda c: "is required",
    "string_type": lambda c: "must be a string",
    "int_type": lambda c: "must be a JSON integer",
    "int_parsing": lambda c: "must be an integer",
    "int_from_float": lambda c: "must be a whole number",
    "float_type": lambda c: "must be a number",
    "float_parsing": lambda c: "must be a number",
    "finite_number": lambda c: "must be a finite number",
    "bool_type": lambda c: "must be true or false",
    "bool_parsing": lambda c: "must be true or false",
    "list_type": lambda c: "must be a list",
    "dict_type": lambda c: "must be a JSON object",
    "model_type": lambda c: "must be a JSON object",
    "model_attributes_type": lambda c: "must be a JSON object",
    "none_required": lambda c: "must be null",
    "string_unicode": lambda c: "must be valid text",
    "string_too_short": lambda c: (
        "must not be empty"
        if c.get("min_length") == 1
        else f"must hold at least {_characters(c.get('min_length'))}"
    ),
    "string_too_long": lambda c: f"must hold at most {_characters(c.get('max_length'))}",
    "too_short": lambda c: f"must hold at least {_items(c.get('min_length'))}",
    "too_long": lambda c: f"must hold at most {_items(c.get('max_length'))}",
    "greater_than": lambda c: f"must be greater than {c.get('gt')}",
    "greater_than_equal": lambda c: f"must be at least {c.get('ge')}",
    "less_than": lambda c: f"must be less than {c.get('lt')}",
    "less_than_equal": lambda c: f"must be at most {c.get('le')}",
    "literal_error": lambda c: f"must be one of {_expected(c)}",
    "enum": lambda c: f"must be one of {_expected(c)}",
    "string_pattern_mismatch": lambda c: _PATTERNS.get(
        str(c.get("pattern")), "does not have the required form"
    ),
}


def sentence(error: Error, root: type[BaseModel] | None = None) -> str:
    """One problem in plain words, naming the field's path."""
    kind = error["type"]
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    if kind == "json_invalid":
        return "the body is not valid JSON"
    if kind == "extra_forbidden":
        inside = f" in {where(loc[:-1])}" if len(loc) > 2 else ""
        return unknown_field(loc[-1], model_at(root, loc), inside)
    text = where(loc)
    if kind == "value_error":
        return _value_error(ctx, text)
    say = SENTENCES.get(kind)
    return f"{text} {say(ctx)}" if say else f"{text} is not valid"


def joined(sentences: Sequence[str]) -> str:
    """Every problem, in order, at most MAX_PROBLEMS of them named."""
    unique = list(dict.fromkeys(sentences))
    shown = "; ".join(unique[:MAX_PROBLEMS])
    more = len(unique) - MAX_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")
