"""The local embedder: the real int8 all-MiniLM-L6-v2 on onnxruntime, no network."""

from __future__ import annotations

import math
import random
import threading

import numpy as np
import onnxruntime
import pytest

from taisce.adapters.embedders.local_minilm import LocalMiniLM
from taisce.domain.ports.vectors import Embedder, EmbeddingError


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    return LocalMiniLM()


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


def varied_texts(n: int, seed: int = 7, longest: int = 40) -> list[str]:
    """Texts of 1 to `longest` words, so batches mix lengths (and pad)."""
    rng = random.Random(seed)
    words = ["Atlas", "Acme", "Lisbon", "manager", "budget", "weather", "river", "memory"]
    words += ["agent", "tea", "sunny", "rain", "deadline", "invoice"]
    words += ["Zoë", "café", "東京", "Straße", "über", "naïve"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, longest))) for _ in range(n)]


def test_it_is_an_embedder(model: LocalMiniLM) -> None:
    embedder: Embedder = model
    assert embedder.name == "local-minilm"
    assert embedder.dimensions == 384


def test_vectors_have_384_dimensions_and_unit_length(model: LocalMiniLM) -> None:
    vectors = model.embed(["Atlas works at Acme.", "a", ""])
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == 384
        assert all(isinstance(x, float) and math.isfinite(x) for x in vector)
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_empty_list_gives_empty_list(model: LocalMiniLM) -> None:
    assert model.embed([]) == []


def test_deterministic_across_calls_and_instances(model: LocalMiniLM) -> None:
    texts = ["Atlas is employed at Acme Corp", "Who manages Atlas?"]
    first = model.embed(texts)
    assert model.embed(texts) == first
    np.testing.assert_allclose(LocalMiniLM().embed(texts), first, atol=1e-6)


def test_order_is_kept_under_sorting_and_batching(model: LocalMiniLM) -> None:
    texts = varied_texts(150)
    together = model.embed(texts)
    alone = [model.embed([text])[0] for text in texts]
    np.testing.assert_allclose(together, alone, atol=1e-5)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The (batch, sequence) shape of every model run."""
    shapes: list[tuple[int, int]] = []
    real_run = onnxruntime.InferenceSession.run

    def recording_run(self, output_names, input_feed, *args, **kwargs):
        shapes.append(input_feed["input_ids"].shape)
        return real_run(self, output_names, input_feed, *args, **kwargs)

    monkeypatch.setattr(onnxruntime.InferenceSession, "run", recording_run)
    return shapes


def test_short_texts_cost_one_run_per_64(model: LocalMiniLM, runs: list[tuple[int, int]]) -> None:
    model.embed(varied_texts(130, longest=12))
    assert sorted(batch for batch, _ in runs) == [2, 64, 64]
    # Sorted by length first, so each run is padded only to its own longest text.
    widths = [width for _, width in runs]
    assert widths == sorted(widths, reverse=True)
    runs.clear()
    model.embed(["one"])
    assert runs == [(1, 3)]  # [CLS] one [SEP]


def test_long_texts_go_in_smaller_runs(runs: list[tuple[int, int]]) -> None:
    # A small budget of padded tokens per run keeps the test fast: 4 texts of 62 tokens.
    model = LocalMiniLM(max_batch_tokens=256)
    texts = [f"text {i} " + "word " * 58 for i in range(10)] + varied_texts(10, longest=8)
    random.Random(1).shuffle(texts)
    vectors = model.embed(texts)
    assert sum(batch for batch, _ in runs) == 20
    assert all(batch * width <= 256 for batch, width in runs)
    assert runs[:2] == [(4, 62), (4, 62)]
    np.testing.assert_allclose(vectors, [model.embed([text])[0] for text in texts], atol=1e-5)


def test_similar_sentences_score_higher_than_unrelated(model: LocalMiniLM) -> None:
    question, employed, weather = model.embed(
        [
            "Where does Atlas work?",
            "Atlas is employed at Acme Corp",
            "The weather in Lisbon is sunny",
        ]
    )
    assert cosine(question, employed) > cosine(question, weather) + 0.3


def test_similarities_match_the_float_model(model: LocalMiniLM) -> None:
    # The figures sentence-transformers' README prints for all-MiniLM-L6-v2 (float32,
    # PyTorch): 0.6660, 0.1046 and 0.1411. The int8 model must stay close to them.
    lovely, sunny, stadium = model.embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    assert cosine(lovely, sunny) == pytest.approx(0.6660, abs=0.01)
    assert cosine(lovely, stadium) == pytest.approx(0.1046, abs=0.01)
    assert cosine(sunny, stadium) == pytest.approx(0.1411, abs=0.01)


def test_long_text_is_truncated_to_256_tokens(model: LocalMiniLM) -> None:
    head = " ".join(f"word{i}" for i in range(2000))
    long_text = (head + " ")[:10_000]
    assert len(long_text) == 10_000
    # Only the first 256 tokens count, so what follows them changes nothing.
    (vector, tail_changed) = model.embed([long_text, long_text[:9_000] + "Z" * 1_000])
    assert len(vector) == 384
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(vector, tail_changed, atol=1e-6)


def test_unicode_text(model: LocalMiniLM) -> None:
    texts = [
        "Zoë works at the Straße café in München.",
        "Zoe works at the Strasse cafe in Munchen.",
        "東京で働いています 🙂",
        "Σίσυφος",
        "\u200b\u00a0\t\n",
    ]
    vectors = model.embed(texts)
    for vector in vectors:
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    # The tokenizer lowercases and strips accents, so these two read alike.
    assert cosine(vectors[0], vectors[1]) > 0.9


def test_nothing_loads_until_the_first_text(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions: list[object] = []
    real_new_session = LocalMiniLM._new_session

    def counting(self: LocalMiniLM):
        sessions.append(self)
        return real_new_session(self)

    monkeypatch.setattr(LocalMiniLM, "_new_session", counting)
    model = LocalMiniLM()
    assert model.embed([]) == []
    assert sessions == []
    model.embed(["now"])
    model.embed(["and again"])
    assert len(sessions) == 1


def test_threads_share_one_session(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions: list[object] = []
    real_new_session = LocalMiniLM._new_session

    def slow_counting(self: LocalMiniLM):
        sessions.append(self)
        return real_new_session(self)

    monkeypatch.setattr(LocalMiniLM, "_new_session", slow_counting)
    model = LocalMiniLM()
    texts = varied_texts(8, seed=3, longest=12)
    start = threading.Barrier(6)
    results: list[list[list[float]]] = []
    errors: list[BaseException] = []

    def worker() -> None:
        start.wait()
        try:
            results.append(model.embed(texts))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(sessions) == 1
    for result in results[1:]:
        np.testing.assert_allclose(result, results[0], atol=1e-6)


def test_a_missing_model_file_is_an_embedding_error(tmp_path) -> None:
    model = LocalMiniLM(model_path=tmp_path / "missing.onnx")
    with pytest.raises(EmbeddingError, match="could not load"):
        model.embed(["text"])


def test_one_string_is_refused(model: LocalMiniLM) -> None:
    with pytest.raises(TypeError):
        model.embed("not a list")  # type: ignore[arg-type]
