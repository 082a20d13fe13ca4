"""The cosine floors of recall, which belong to the embedding model: each model puts
its cosines on a scale of its own (MiniLM scores unrelated texts near 0, e5 near 0.8),
so a floor chosen for one means nothing for another. The defaults are MiniLM's, chosen
on the development data; another model brings its own (`Embedder.floors`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CosineFloors:
    # The cosine a fact's statement must reach with the question (domain/fact_ranking.py).
    fact: float = 0.65
    # A fact this far below the best kept one is left out (domain/fact_ranking.py).
    drop: float = 0.08
    # A name-like span of the question finds an entity name this near (domain/similar_names.py).
    span: float = 0.85
    # Two entity names this near are proposed as one entity (domain/aliases.py).
    proposal: float = 0.85
    # A report must reach this cosine with the question to come back when no name
    # matched (domain/report_ranking.py); MiniLM puts unrelated short texts near 0.1.
    report: float = 0.25
    # A passage found by meaning alone (the vector or topic ranking, not the words)
    # must reach this cosine with an English question naming no month or day
    # (domain/passage_step.py): in a memory of a few notes every note came back for any
    # question. The highest floor that cost nothing on the development data.
    passage: float = 0.1


MINILM_FLOORS = CosineFloors()


def floors_of(model: object) -> CosineFloors:
    """The floors a model declares, else MiniLM's (the model they were chosen with)."""
    floors = getattr(model, "floors", None)
    return floors if isinstance(floors, CosineFloors) else MINILM_FLOORS
