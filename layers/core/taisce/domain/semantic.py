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

    def within(self, deadline: Deadline | None) -> Semantic:
        """The same model and index, each call bounded by the deadline (domain/deadline.py)."""
        if deadline is None:
            return self
        return replace(
            self,
            embedder=DeadlineEmbedder(self.embedder, deadline),
            index=DeadlineIndex(self.index, deadline),
        )
