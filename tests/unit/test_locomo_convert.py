"""`taisce bench convert-locomo`: LoCoMo's published schema → the quality dataset format.

The conversation below is written here in the published schema (`locomo10.json`: samples
with `conversation`, `qa`, `observation`); none of LoCoMo's own text is in the project.
Where the LoCoMo development files sit beside the project (CI has them), the published
copy of its first five conversations is converted and compared with the project's
converted files: the same messages, questions, evidence and facts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taisce.evaluation.cli import main
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.locomo import LocomoError, convert, session_time

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT / ".." / "shared" / "bench" / "locomo"

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Dana",
        "speaker_b": "Eoin",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Dana", "dia_id": "D1:1", "text": "I moved to Galway in March."},
            {
                "speaker": "Eoin",
                "dia_id": "D1:2",
                "text": "Lovely! Here is my new bike.",
                "img_url": ["https://example.invalid/bike.jpg"],
                "blip_caption": "a photo of a red bicycle by a wall",
                "query": "red bike",
            },
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Dana", "dia_id": "D2:1", "text": "The bike suits you. I start at Acme."},
        ],
    },
    "qa": [
        {
            "question": "Where does Dana live?",
            "answer": "Galway",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {"question": "When did Dana move?", "answer": 2023, "evidence": ["D1:1"], "category": 2},
        {
            "question": "What colour is Eoin's bike, and where does Dana work?",
            "answer": "Red; Acme",
            "evidence": ["D1:2", "D2:1; D1:1", "D", "D2:1", "D2:1"],
            "category": 1,
        },
        {
            "question": "Where does Eoin live?",
            "adversarial_answer": "Galway",
            "evidence": ["D1:1"],
            "category": 5,
        },
    ],
    "observation": {
        "session_2_observation": {"Dana": [["Dana starts a job at Acme.", "D2:1"]]},
        "session_1_observation": {
            "Dana": [["Dana lives in Galway.", "D1:1"]],
            "Eoin": [["Eoin has a red bicycle.", ["D1:2", "D1:1"]], ["Eoin likes art.", "D9:9"]],
        },
    },
    "session_summary": {"session_1_summary": "Dana and Eoin catch up."},
    "event_summary": {},
}


def test_messages_keep_speaker_session_time_and_the_shared_photo() -> None:
    dataset = convert([SAMPLE], "tiny")
    (conversation,) = dataset["conversations"]
    assert conversation["id"] == "conv-x"
    assert conversation["messages"] == [
        {
            "id": "D1:1",
            "role": "user",
            "speaker": "Dana",
            "content": "I moved to Galway in March.",
            "source": "session-1",
            "occurred_at": "2023-05-08T13:56:00Z",
        },
        {
            "id": "D1:2",
            "role": "user",
            "speaker": "Eoin",
            "content": "Lovely! Here is my new bike. "
            "[shares a photo: a photo of a red bicycle by a wall]",
            "source": "session-1",
            "occurred_at": "2023-05-08T13:56:00Z",
        },
        {
            "id": "D2:1",
            "role": "user",
            "speaker": "Dana",
            "content": "The bike suits you. I start at Acme.",
            "source": "session-2",
            "occurred_at": "2023-06-19T10:04:00Z",
        },
    ]
    assert "facts" not in conversation


def test_questions_get_ids_named_categories_text_answers_and_only_evidence_that_names_a_turn() -> (
    None
):
    (conversation,) = convert([SAMPLE], "tiny")["conversations"]
    assert conversation["questions"] == [
        {
            "id": "conv-x-q0",
            "question": "Where does Dana live?",
            "answer": "Galway",
            "evidence": ["D1:1"],
            "category": "single-hop",
        },
        {
            "id": "conv-x-q1",
            "question": "When did Dana move?",
            "answer": "2023",
            "evidence": ["D1:1"],
            "category": "temporal",
        },
        {
            "id": "conv-x-q2",
            "question": "What colour is Eoin's bike, and where does Dana work?",
            "answer": "Red; Acme",
            "evidence": ["D1:2", "D2:1"],
            "category": "multi-hop",
        },
        {
            "id": "conv-x-q3",
            "question": "Where does Eoin live?",
            "answer": "Galway",
            "evidence": ["D1:1"],
            "category": "adversarial",
        },
    ]


def test_observations_become_value_facts_about_the_speaker_citing_their_turn() -> None:
    (conversation,) = convert([SAMPLE], "tiny", observations=True)["conversations"]

    def fact(subject: str, text: str, message_id: str | None) -> dict[str, str]:
        out = {
            "subject": subject,
            "predicate": "noted",
            "object": text,
            "object_kind": "value",
            "statement": text,
            "source_role": "user",
        }
        if message_id:
            out["message_id"] = message_id
        return out

    assert conversation["facts"] == [
        fact("Dana", "Dana lives in Galway.", "D1:1"),
        fact("Eoin", "Eoin has a red bicycle.", "D1:2"),
        fact("Eoin", "Eoin likes art.", None),  # D9:9 names no turn
        fact("Dana", "Dana starts a job at Acme.", "D2:1"),
    ]


def test_session_times() -> None:
    assert session_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
    assert session_time("12:09 am on 13 September, 2023") == "2023-09-13T00:09:00Z"
    assert session_time("10:04  am on 19 June, 2023") == "2023-06-19T10:04:00Z"
    assert session_time("sometime") is None
    assert session_time(None) is None


@pytest.mark.parametrize(
    ("samples", "message"),
    [
        ({"conversation": {}}, "list of samples"),
        ([{"qa": []}], "[0]: a sample must be an object with a conversation"),
        ([{"conversation": {"session_1": [{"text": "hi"}]}}], "session_1[0]: a turn"),
        (
            [{"conversation": {"session_1": []}, "qa": [{"answer": "x"}]}],
            "[0].qa[0]: a question",
        ),
    ],
)
def test_input_not_in_the_published_schema_is_refused_naming_the_place(
    samples: object, message: str
) -> None:
    with pytest.raises(LocomoError, match=message.replace("[", r"\[").replace("]", r"\]")):
        convert(samples, "bad")


def test_the_command_writes_a_file_the_quality_benchmark_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "locomo10.json"
    source.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    target = tmp_path / "locomo.json"
    assert main(["bench", "convert-locomo", str(source), str(target), "--observations"]) == 0
    assert capsys.readouterr().out.startswith(
        f"wrote {target}: 1 conversations, 3 messages, 4 questions, 0 without evidence, 4 facts"
    )
    dataset = load_dataset(str(target))
    assert dataset.name == "locomo10+observations"
    (conversation,) = dataset.conversations
    assert [m.id for m in conversation.messages] == ["D1:1", "D1:2", "D2:1"]
    assert [q.category for q in conversation.questions] == [
        "single-hop",
        "temporal",
        "multi-hop",
        "adversarial",
    ]
    assert dataset.warnings == []


def test_the_command_refuses_a_file_that_is_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "locomo10.json"
    source.write_text("not json", encoding="utf-8")
    target = tmp_path / "out.json"
    assert main(["bench", "convert-locomo", str(source), str(target)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not target.exists()


@pytest.mark.parametrize(
    ("observations", "reference"),
    [(False, "locomo-dev.json"), (True, "locomo-dev-facts.json")],
)
def test_the_published_development_half_converts_to_the_projects_files(
    tmp_path: Path, observations: bool, reference: str
) -> None:
    raw = LOCOMO / "locomo10-dev-raw.json"
    if not raw.is_file() or not (LOCOMO / reference).is_file():
        pytest.skip("the LoCoMo development files are not beside the project")
    target = tmp_path / "converted.json"
    args = ["bench", "convert-locomo", str(raw), str(target)]
    assert main(args + (["--observations"] if observations else [])) == 0
    converted = json.loads(target.read_text(encoding="utf-8"))["conversations"]
    expected = json.loads((LOCOMO / reference).read_text(encoding="utf-8"))["conversations"]
    assert [c["id"] for c in converted] == [c["id"] for c in expected]
    for mine, theirs in zip(converted, expected, strict=True):
        assert mine["questions"] == theirs["questions"], mine["id"]
        assert mine["messages"] == theirs["messages"], mine["id"]
        assert mine.get("facts") == theirs.get("facts"), mine["id"]
