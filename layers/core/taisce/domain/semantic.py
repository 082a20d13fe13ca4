"""What recall steps 2-4 need of a deployment: a model for the question and an index to
search. Its own module: the memory, the worker and the wiring carry it without the
recall's steps."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .deadline import Deadline, DeadlineEmbedder, DeadlineIndex
from .floors import MINILM_FLOORS, CosineFloors
from .ports.vectors import Embedder, VectorIndex


@dataclass(frozen=True)
class Semantic:
    """What steps 2-4 need: a model for the question and an index to search."""

    embedder: Embedder
    index: VectorIndex
    # A model across the network (Bedrock) is asked for the question's vector at the
    # start of the recall, beside the store's first reads (Question). A local model
    # is not: it takes the same cores the reads need (measured: no gain, 2 cores).
    early_vector: bool = False
    # A local model embeds what a request stores before it answers, so a recall right
    # after finds it by meaning (read your writes); a model across the network leaves
    # it to the worker, and recall ranks a fact not yet embedded by its words.
    embed_on_write: bool = False
    # Whether the model reads every language alike (multilingual-e5). If not, a question
    # that does not read as English is not ranked by its cosines (domain/languages.py):
    # the named entities' facts come back by their words.
    any_language: bool = False
    # The model's cosine floors (domain/floors.py): each model has its own scale.
    floors: CosineFloors = MINILM_FLOORS
    # Whether the model and the index run in this process (the local model, the
    # embedded index): their calls never wait on a network, so a deadline does not
    # bound them. Bounding costs a thread per call, ~0.6 ms each on 2 cores, a third of
    # a local recall's time (docs/benchmarks.md); unknown parts are bounded.
    local_model: bool = False
    local_index: bool = False

    def within(self, deadline: Deadline | None) -> Semantic:
        """The same model and index, each call across the network bounded by the
        deadline (domain/deadline.py)."""
        if deadline is None or (self.local_model and self.local_index):
            return self
        embedder = self.embedder if self.local_model else DeadlineEmbedder(self.embedder, deadline)
        index = self.index if self.local_index else DeadlineIndex(self.index, deadline)
        return replace(self, embedder=embedder, index=index)
