"""The retrieval-quality harness (`taisce bench quality`): its output, and its evidence
coverage on hand-made conversations where the right answer is known."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from taisce.evaluation.baselines import fuse, pack
from taisce.evaluation.cli import main
from taisce.evaluation.dataset import (
    DatasetError,
    load_dataset,
    parse_dataset,
    parse_when,
    stored_messages,
)
from taisce.evaluation.quality import (
    Options,
    _bundle_messages,
    _reports_without_evidence,
    run_quality,
)

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "testdata" / "quality-small.json"


def _message(mid: str, role: str, content: str, when: str, **extra: str) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": content, "occurred_at": when, **extra}


def _size(role: str, source: str | None, text: str) -> int:
    """The documented character rule: role + source + text code points."""
    return len(role) + len(source or "") + len(text)


# A conversation without facts: one message holds a rare word, the most recent message
# (by time) is not the last one in the file, and one message says the same thing as a
# question in other words.
TINY_MESSAGES = [
    _message("m1", "user", "The weather was grey all week.", "2024-01-01T10:00:00Z",
             speaker="Ana", source="session-1"),
    _message("m2", "assistant", "Sorry to hear that.", "2024-01-01T10:01:00Z",
             source="session-1"),
    _message("m3", "user", "I saw a quokka at the zoo yesterday.", "2024-01-02T09:00:00Z",
             speaker="Ben", source="session-2"),
    _message("m4", "tool", "Meeting notes: budget, hiring and the office move.",
             "2024-01-03T12:00:00Z", source="docs/notes.md"),
    _message("m5", "user", "Lunch was fine.", "2024-01-05T09:00:00Z",
             speaker="Ana", source="session-3"),
    _message("m6", "user", "Off to bed, long day tomorrow.", "2024-01-04T22:00:00Z",
             speaker="Ben", source="session-3"),
    _message("m7", "user", "My dog likes long walks by the river every single evening.",
             "2024-01-02T08:00:00Z"),
]  # fmt: skip
TINY = {
    "name": "tiny",
    "conversations": [
        {
            "id": "t1",
            "messages": TINY_MESSAGES,
            "questions": [
                {"id": "rare", "question": "Where did someone see a quokka?",
                 "evidence": ["m3"], "category": "lexical"},
                {"id": "latest", "question": "What was said most recently?",
                 "evidence": ["m5"], "category": "recent"},
                {"id": "two", "question": "What did Ana say?",
                 "evidence": ["m1", "m5"], "category": "recent"},
                {"id": "paraphrase", "question": "Which canine enjoys strolling?",
                 "evidence": ["m7"], "category": "semantic"},
                {"id": "none", "question": "Is there anything about penguins?",
                 "evidence": [], "category": "adversarial"},
            ],
        },
        {
            "id": "t2",
            "messages": [
                _message("f1", "user", "I moved to Galway in March.", "2024-03-02T10:00:00Z",
                         speaker="Cara", source="session-1"),
                _message("f2", "assistant", "Galway is lovely.", "2024-03-02T10:01:00Z"),
            ],
            "facts": [
                {"subject": "Cara", "predicate": "lives in", "object": "Galway",
                 "source_role": "user", "message_id": "f1"},
            ],
            "questions": [
                {"id": "fact", "question": "Where does Cara live?", "evidence": ["f1"],
                 "category": "lexical"},
            ],
        },
    ],
}  # fmt: skip


class Concepts:
    """A stand-in embedder: words of one concept share a dimension, so "canine" is
    near "dog" though they share no letters. Counts the texts it embeds."""

    name = "concepts"
    dimensions = 4
    GROUPS = (("dog", "canine", "hound"), ("walks", "strolling", "walk"), ("quokka",))

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        vectors = []
        for text in texts:
            words = set(re.findall(r"\w+", text.lower()))
            v = [1.0 if words & set(g) else 0.0 for g in self.GROUPS] + [0.1]
            norm = math.sqrt(sum(x * x for x in v))
            vectors.append([x / norm for x in v])
        return vectors


def _outcome(report: dict[str, Any], qid: str, method: str, budget: int) -> dict[str, Any]:
    (record,) = [r for r in report["questions"] if r["id"] == qid]
    return record["results"][method][str(budget)]


def _stored(mid: str) -> tuple[str, str | None, str]:
    dataset = parse_dataset(TINY)
    for conversation in dataset.conversations:
        for m in stored_messages(conversation, "both")[0]:
            if m.dataset_id == mid:
                return m.role, m.source, m.text
    raise KeyError(mid)


def test_speaker_is_stored_as_prefix_and_source() -> None:
    role, source, text = _stored("m3")
    assert (role, source, text) == (
        "user",
        "session-2/Ben",
        "Ben: I saw a quokka at the zoo yesterday.",
    )
    assert _stored("m7") == ("user", None, TINY_MESSAGES[6]["content"])


def test_bm25_finds_the_one_message_with_a_rare_word() -> None:
    size = _size(*_stored("m3"))
    report = run_quality(parse_dataset(TINY), Options(budgets=[size - 1, size]))
    fits = _outcome(report, "rare", "bm25", size)
    assert fits["any"] and fits["all"]
    assert fits["characters"] == size
    # One code point short: the only ranked message does not fit, so nothing is taken.
    short = _outcome(report, "rare", "bm25", size - 1)
    assert not short["any"] and short["characters"] == 0


def test_recency_takes_the_latest_by_time_not_by_file_order() -> None:
    latest = _size(*_stored("m5"))
    both = latest + _size(*_stored("m6"))
    report = run_quality(parse_dataset(TINY), Options(budgets=[latest, both]))
    one = _outcome(report, "latest", "recency", latest)
    assert one["any"] and one["characters"] == latest
    # Two evidence messages, only one of them among the most recent: any, not all.
    two = _outcome(report, "two", "recency", both)
    assert two["any"] and not two["all"]
    assert two["characters"] == both


def test_taisce_covers_evidence_through_a_fact_message_id() -> None:
    report = run_quality(parse_dataset(TINY), Options(budgets=[1000]))
    fact = TINY["conversations"][1]["facts"][0]
    statement = f"{fact['subject']} {fact['predicate']} {fact['object']}"
    expected = sum(
        len(v) for v in (fact["subject"], fact["predicate"], fact["object"], statement, "user")
    )
    covered = _outcome(report, "fact", "taisce", 1000)
    assert covered["any"] and covered["all"]
    assert covered["characters"] == expected
    # Without facts (and without embeddings) Taisce finds nothing in the first conversation.
    assert _outcome(report, "rare", "taisce", 1000)["characters"] == 0
    block = report["budgets"][0]
    assert block["methods"]["taisce"]["by_category"]["lexical"]["evidence_any"] == 0.5
    assert block["methods"]["taisce"]["degraded"] == {"reports": 6, "passages": 6}


def test_questions_without_evidence_are_reported_apart() -> None:
    report = run_quality(parse_dataset(TINY), Options(budgets=[1000]))
    block = report["budgets"][0]
    assert report["dataset"]["answerable"] == 5 and report["dataset"]["no_answer"] == 1
    assert "adversarial" not in block["methods"]["bm25"]["by_category"]
    # No word of the question is in the conversation: BM25 returns nothing; recency fills.
    assert block["no_answer"]["bm25"] == {
        "questions": 1,
        "mean_characters": 0,
        "empty_share": 1.0,
    }
    recency = _outcome(report, "none", "recency", 1000)["characters"]
    assert recency > 0
    assert block["no_answer"]["recency"]["mean_characters"] == recency


def test_dense_and_hybrid_find_a_paraphrase_bm25_cannot() -> None:
    size = _size(*_stored("m7"))
    embedder = Concepts()
    report = run_quality(parse_dataset(TINY), Options(budgets=[size], embedder=embedder))
    assert report["settings"]["methods"] == [
        "taisce", "bm25", "dense", "hybrid", "recency",
        "bm25-passages", "dense-passages", "hybrid-passages",
    ]  # fmt: skip
    assert not _outcome(report, "paraphrase", "bm25", size)["any"]
    assert _outcome(report, "paraphrase", "dense", size)["all"]
    assert _outcome(report, "paraphrase", "hybrid", size)["all"]
    # Each distinct stored text was embedded once, whatever the number of questions.
    stored = [
        m.text for c in parse_dataset(TINY).conversations for m in stored_messages(c, "both")[0]
    ]
    assert report["baseline_texts_embedded"] == len(set(stored))
    assert sorted(t for t in embedder.seen if t in stored) == sorted(set(stored))


def test_recall_shares_follow_the_per_question_outcomes() -> None:
    report = run_quality(parse_dataset(TINY), Options(budgets=[60, 1000]))
    for block in report["budgets"]:
        key = str(block["budget"])
        for method, figures in block["methods"].items():
            answerable = [r for r in report["questions"] if r["evidence"]]
            hits = [r["results"][method][key] for r in answerable]
            assert figures["evidence_any"] == sum(o["any"] for o in hits) / len(hits)
            assert figures["evidence_all"] == sum(o["all"] for o in hits) / len(hits)
            assert figures["evidence_all"] <= figures["evidence_any"]
            assert all(o["characters"] <= block["budget"] for o in hits)
        taisce, bm25 = block["methods"]["taisce"], block["methods"]["bm25"]
        ratio = block["taisce_over"]["bm25"]["evidence_any"]
        if bm25["evidence_any"]:
            assert ratio == pytest.approx(taisce["evidence_any"] / bm25["evidence_any"])
        else:
            assert ratio is None


def test_small_dataset_through_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "quality.json"
    code = main(["bench", "quality", str(SMALL), "--embeddings", "none", "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    for budget in ("1,000", "4,000", "16,000"):
        assert f"### max_characters {budget}" in printed
    assert "dense and hybrid baselines are skipped" in printed
    for method in ("taisce", "bm25", "recency", "bm25-passages"):
        assert f"| {method} |" in printed

    report = json.loads(out.read_text())
    data = json.loads(SMALL.read_text())
    questions = [q for c in data["conversations"] for q in c["questions"]]
    assert report["dataset"]["conversations"] == len(data["conversations"]) == 2
    assert report["dataset"]["questions"] == len(questions)
    assert report["dataset"]["no_answer"] == sum(1 for q in questions if not q["evidence"])
    assert report["dataset"]["conversations_with_facts"] == sum(
        1 for c in data["conversations"] if c.get("facts")
    )
    assert report["settings"]["methods"] == ["taisce", "bm25", "recency", "bm25-passages"]
    assert report["settings"]["speaker"] == "both"
    assert [b["budget"] for b in report["budgets"]] == [1000, 4000, 16000]
    categories = {q["category"] for q in questions if q["evidence"]}
    for block in report["budgets"]:
        for method in ("taisce", "bm25", "recency", "bm25-passages"):
            figures = block["methods"][method]
            assert set(figures["by_category"]) == categories
            assert 0 <= figures["evidence_all"] <= figures["evidence_any"] <= 1
            assert figures["mean_characters"] <= block["budget"]
            assert figures["latency_ms"]["p50"] <= figures["latency_ms"]["p95"]
        assert block["methods"]["taisce"]["errors"] == 0
        assert set(block["taisce_over"]) == {"bm25", "recency", "bm25-passages"}
    # Baselines fill the budget with whole units: more budget never covers less.
    for method in ("bm25", "recency", "bm25-passages"):
        shares = [b["methods"][method]["evidence_any"] for b in report["budgets"]]
        assert shares == sorted(shares)


def test_bundle_messages_come_from_every_surface() -> None:
    answer = {
        "facts": [{"message_id": "a"}, {"message_id": None}],
        "reports": [{"source_messages": ["b", "c"]}],
        "passages": [{"message_id": "d"}],
    }
    assert _bundle_messages(answer) == {"a", "b", "c", "d"}


def test_characters_on_reports_citing_no_evidence() -> None:
    cited = {"title": "Cara", "summary": "Lives in Galway.", "path": ["Places"],
             "source_messages": ["s1", "s2"]}  # fmt: skip
    other = {"title": "Music", "summary": "Violin.", "path": [], "source_messages": ["s3"]}
    bare = {"title": "Empty", "summary": "x", "source_messages": []}
    answer = {"reports": [cited, other, bare], "passages": [{"message_id": "s3"}]}
    by_server_id = {"s1": "f1", "s3": "m9"}
    # The first cites the evidence (its server id read as the dataset's): not counted.
    assert _reports_without_evidence(answer, ["f1"], by_server_id) == 5 + 7 + 5 + 1
    assert _reports_without_evidence(answer, ["m9"], by_server_id) == 4 + 16 + 6 + 5 + 1
    assert _reports_without_evidence(answer, [], by_server_id) == 4 + 16 + 6 + 5 + 7 + 5 + 1
    assert _reports_without_evidence({"reports": []}, [], {}) == 0


def test_fuse_and_pack() -> None:
    # RRF with k=60: an item ranked by both lists beats items ranked first by one.
    assert fuse([[1, 2, 3], [3, 4]]) == [3, 1, 2, 4]  # 2 and 4 tie: first seen first
    assert pack([2, 0, 1], [5, 5, 5], 11, 200) == ([2, 0], 10)
    assert pack([0, 1, 2], [5, 30, 1], 30, 200) == ([0], 5)  # the first misfit stops
    assert pack([0, 1, 2], [1, 1, 1], 30, 2) == ([0, 1], 2)  # and so does the row limit


def test_loader_refuses_what_it_cannot_score(tmp_path: Path) -> None:
    bad = {"conversations": [{"id": "c", "messages": [{"id": "m", "role": "human",
                                                       "content": "hi"}]}]}  # fmt: skip
    with pytest.raises(DatasetError, match="role"):
        parse_dataset(bad)
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(DatasetError, match="not JSON"):
        load_dataset(path)
    assert main(["bench", "quality", str(path)]) == 2


def test_timestamps_in_common_shapes() -> None:
    assert parse_when("2024-03-02T10:00:00Z").isoformat() == "2024-03-02T10:00:00+00:00"
    assert parse_when("2024-03-02").isoformat() == "2024-03-02T00:00:00+00:00"
    assert parse_when("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
    assert parse_when("2023/05/20 (Sat) 02:21").isoformat() == "2023-05-20T02:21:00+00:00"
    assert parse_when("sometime last week") is None


def test_committed_datasets_match_the_generator() -> None:
    from bench.make_quality_dataset import dump, make_dataset, small_slice

    dataset = make_dataset(7)
    assert dump(dataset) == (ROOT / "bench" / "data" / "dev.json").read_text(encoding="utf-8")
    assert dump(small_slice(dataset)) == SMALL.read_text(encoding="utf-8")


def test_with_no_file_the_real_conversations_then_the_synthetic_set(tmp_path: Path) -> None:
    from taisce.evaluation.cli import REAL_FILES, SYNTHETIC, default_files

    files, notes = default_files(tmp_path)
    assert files == [tmp_path / SYNTHETIC]
    assert len(notes) == 1 and "absent" in notes[0]
    real = tmp_path / "../shared/bench/locomo"
    real.mkdir(parents=True)
    (real / REAL_FILES[0]).write_text("{}", encoding="utf-8")
    files, notes = default_files(tmp_path)
    assert files == [real / REAL_FILES[0], tmp_path / SYNTHETIC]
    assert notes == [f"skipped {real / REAL_FILES[1]}: not found"]
