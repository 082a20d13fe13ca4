"""What every step of one recall reads: the question, its controls and filters, the
question's meaning (vector and index) and the one bundle the steps fill. Made once per
recall and passed to each step (domain/recall.py) instead of a list of parameters."""

from __future__ import annotations

from dataclasses import dataclass, field

from .budget import Bundle
from .controls import RecallControls
from .filters import FactFilter
from .floors import MINILM_FLOORS, CosineFloors
from .languages import written_in_other_script
from .model import Fact, Role, Surface
from .ports.store import Store
from .question_topic import nameless_question
from .question_vector import Meaning, Question
from .semantic import Semantic


@dataclass(frozen=True, slots=True)
class RecallContext:
    store: Store
    project: str
    question: str
    controls: RecallControls
    filters: FactFilter
    bundle: Bundle
    # The question's vector (made at most once) and the index; None without a model.
    meaning: Meaning | None
    # The facts steps 1 and 2 read: step 4 follows the facts nearest the question to
    # their messages, and two in three of those are facts already read (real
    # conversations), which it then need not read again.
    read: dict[str, Fact] = field(default_factory=dict)
    # Whether the model reads every language (Semantic.any_language): if not, a question
    # that does not read as English is not ranked by its cosines (domain/languages.py).
    any_language: bool = False
    # The model's cosine floors (domain/floors.py).
    floors: CosineFloors = MINILM_FLOORS

    def model_reads_question(self) -> bool:
        """Whether the model's cosines may rank reports and passages for this question:
        a question mostly in a script other than Latin is one an English-only model
        reads as pieces it does not know, near any other such text (domain/languages.py)."""
        return self.any_language or not written_in_other_script(self.question)

    @classmethod
    def open(
        cls,
        store: Store,
        project: str,
        question: str,
        controls: RecallControls,
        semantic: Semantic | None,
        now: str,
    ) -> RecallContext:
        """The context of one recall; `now` (a stored-form timestamp) is when facts must
        hold unless the request sent `as_of`. A model across the network is asked for
        the question's vector here, beside the store's first reads (Question)."""
        meaning = None
        any_language = False
        floors = MINILM_FLOORS
        if semantic is not None:
            any_language, floors = semantic.any_language, semantic.floors
            # Step 4 also ranks passages by the question without its names.
            nameless = nameless_question(question) if "passages" in controls.surfaces else None
            q = Question(question, semantic.embedder, early=semantic.early_vector, twin=nameless)
            meaning = Meaning(q, semantic.index)
        bundle = Bundle(controls.max_characters, controls.max_rows)
        filters = controls.fact_filter(now)
        return cls(
            store,
            project,
            question,
            controls,
            filters,
            bundle,
            meaning,
            any_language=any_language,
            floors=floors,
        )

    @property
    def roles(self) -> tuple[Role, ...]:
        return self.controls.source_roles

    def wants(self, surface: Surface) -> bool:
        """Whether the request asked for this surface."""
        return surface in self.controls.surfaces
