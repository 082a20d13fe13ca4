"""LoCoMo as published (`locomo10.json`) → the quality benchmark's dataset format.

LoCoMo (Maharana et al., ACL 2024) publishes a list of samples, each with
`conversation` (`speaker_a`, `speaker_b`, `session_N` turns and `session_N_date_time`),
`qa` (`question`, `answer` or `adversarial_answer`, `evidence` as dialogue ids,
numeric `category`) and per-session `observation`s. `taisce bench convert-locomo IN
OUT` writes the format `taisce.evaluation.dataset` loads: one conversation per sample,
every turn a `user` message whose speaker is the person, the session as its source and
the session's date as its time; a shared image becomes "[shares a photo: caption]" at
the end of the turn, so the words the questions ask about are in the text.

The published evidence has a few slips ("D8:6; D9:17", "D", an id of no turn): an
evidence id that names no turn of the conversation is dropped rather than guessed at,
so a question can end with no evidence and is then reported apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

# LoCoMo's numeric categories, as its paper and evaluation code name them.
CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}

_SESSION = re.compile(r"session_(\d+)")
# "1:56 pm on 8 May, 2023"
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


class LocomoError(ValueError):
    """The input is not in LoCoMo's published schema; the message says where."""


def session_time(text: Any) -> str | None:
    """A session's date as RFC 3339 UTC ("1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00Z)."""
    if not isinstance(text, str) or not text.strip():
        return None
    cleaned = " ".join(text.split())
    for pattern in _DATE_FORMATS:
        try:
            moment = datetime.strptime(cleaned, pattern)
        except ValueError:
            continue
        return moment.strftime("%Y-%m-%dT%H:%M:00Z")
    return None


def _sessions(conversation: Mapping[str, Any]) -> list[int]:
    numbers = []
    for key, value in conversation.items():
        match = _SESSION.fullmatch(key)
        if match and isinstance(value, list):
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def _turn_text(turn: Mapping[str, Any]) -> str:
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        shared = f"[shares a photo: {caption.strip()}]"
        text = f"{text} {shared}" if text else shared
    return text


def _messages(conversation: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for number in _sessions(conversation):
        occurred_at = session_time(conversation.get(f"session_{number}_date_time"))
        for i, turn in enumerate(conversation[f"session_{number}"]):
            at = f"{where}.conversation.session_{number}[{i}]"
            if not isinstance(turn, Mapping) or not isinstance(turn.get("dia_id"), str):
                raise LocomoError(f"{at}: a turn must be an object with a dia_id")
            message: dict[str, Any] = {
                "id": turn["dia_id"],
                "role": "user",
                "speaker": turn.get("speaker"),
                "content": _turn_text(turn),
                "source": f"session-{number}",
            }
            if occurred_at:
                message["occurred_at"] = occurred_at
            messages.append(message)
    return messages


def _answer(qa: Mapping[str, Any]) -> str | None:
    answer = qa.get("answer", qa.get("adversarial_answer"))
    return None if answer is None else str(answer)


def _questions(
    sample_id: str, qas: Sequence[Any], known: set[str], where: str
) -> list[dict[str, Any]]:
    questions = []
    for i, qa in enumerate(qas):
        if not isinstance(qa, Mapping) or not isinstance(qa.get("question"), str):
            raise LocomoError(f"{where}.qa[{i}]: a question must be an object with a question")
        evidence = [e for e in qa.get("evidence") or [] if isinstance(e, str) and e in known]
        category = qa.get("category")
        questions.append(
            {
                "id": f"{sample_id}-q{i}",
                "question": qa["question"],
                "answer": _answer(qa),
                "evidence": list(dict.fromkeys(evidence)),
                "category": CATEGORIES.get(category, str(category)),
            }
        )
    return questions


def _facts(observation: Any, known: set[str]) -> list[dict[str, Any]]:
    """LoCoMo's per-session observations as value facts about the speaker they note."""
    facts: list[dict[str, Any]] = []
    if not isinstance(observation, Mapping):
        return facts
    for key in sorted(observation, key=lambda k: _session_number(k)):
        per_speaker = observation[key]
        if not isinstance(per_speaker, Mapping):
            continue
        for speaker, notes in per_speaker.items():
            for note in notes or []:
                if not isinstance(note, Sequence) or len(note) < 2:
                    continue
                text, cited = note[0], note[1]
                if not isinstance(text, str) or not text.strip():
                    continue
                fact: dict[str, Any] = {
                    "subject": speaker,
                    "predicate": "noted",
                    "object": text,
                    "object_kind": "value",
                    "statement": text,
                    "source_role": "user",
                }
                # One id, or a list of them: the fact cites the first that names a turn.
                ids = [cited] if isinstance(cited, str) else cited
                named = [i for i in ids if isinstance(i, str) and i in known]
                if named:
                    fact["message_id"] = named[0]
                facts.append(fact)
    return facts


def _session_number(key: str) -> int:
    match = re.search(r"(\d+)", key)
    return int(match.group(1)) if match else 0


def convert(samples: Any, name: str, observations: bool = False) -> dict[str, Any]:
    """The published samples as one dataset; with `observations`, each as facts too."""
    if not isinstance(samples, list):
        raise LocomoError("the file must be a list of samples, as locomo10.json is")
    conversations = []
    for s, sample in enumerate(samples):
        where = f"[{s}]"
        if not isinstance(sample, Mapping) or not isinstance(sample.get("conversation"), Mapping):
            raise LocomoError(f"{where}: a sample must be an object with a conversation")
        sample_id = str(sample.get("sample_id") or f"conv-{s + 1}")
        messages = _messages(sample["conversation"], where)
        known = {m["id"] for m in messages}
        conversation: dict[str, Any] = {
            "id": sample_id,
            "messages": messages,
            "questions": _questions(sample_id, sample.get("qa") or [], known, where),
        }
        if observations:
            conversation["facts"] = _facts(sample.get("observation"), known)
        conversations.append(conversation)
    return {"name": name, "conversations": conversations}


def convert_file(source: Path, target: Path, observations: bool = False) -> dict[str, int]:
    """Convert `source` into `target`; the counts written, for the command to print."""
    try:
        samples = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LocomoError(f"{source}: not valid JSON ({exc})") from None
    name = source.stem + ("+observations" if observations else "")
    dataset = convert(samples, name, observations)
    target.write_text(json.dumps(dataset, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    conversations = dataset["conversations"]
    return {
        "conversations": len(conversations),
        "messages": sum(len(c["messages"]) for c in conversations),
        "questions": sum(len(c["questions"]) for c in conversations),
        "without evidence": sum(
            1 for c in conversations for q in c["questions"] if not q["evidence"]
        ),
        "facts": sum(len(c.get("facts", [])) for c in conversations),
    }
