"""Simulated respondents: who they are and how strong they are, per format and condition.

Why archetypes: the published results show models that recognise well (multiple choice) but
produce poorly (open completion, error spotting), models that lose accuracy when asked to
motivate, and models that barely use the image. A named archetype per simulated model makes the
demo dashboard show those patterns, and makes tests able to check that scores follow the
abilities given here.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..formats import all_formats
from ..formats.simulation import PRODUCTION, RECOGNITION
from ..text import letter_id
from ..vocab import COMPLETION_CLOSED_TYPE, MOTIVATION_CONDITION, SELECT_ERRORS_TYPE


def skill_formats(skill: str) -> tuple[str, ...]:
    """The formats drawing on one skill of an archetype (`AnswerFormat.sim_skill`), in registry order."""
    return tuple(f.name for f in all_formats() if f.sim_skill == skill)

SIM_FAMILY = "Simulated"
SIM_PROVIDER = "simulated"


@dataclass(frozen=True)
class SimModel:
    """Parameters of one simulated respondent (logit scale, like a 2PL ability)."""

    key: str
    display_name: str
    ability: float
    format_offsets: dict[str, float] = field(default_factory=dict)
    image_effect: float = 0.0          # added to ability on items with an image
    motivation_shift: float = 0.0      # added to ability in the motivation condition
    malformed_rate: float = 0.04       # share of responses with fences, prose, {{ }}, truncation
    multi_select_rate: float = 0.0     # share of radio items answered with two ids (hedging)
    repeat_noise: float = 0.0          # chance that a repeat draws its answer afresh (0: every repeat the same)

    def effective_ability(self, item_type: str, has_image: bool, condition: str) -> float:
        """Ability used for one item: overall + format offset + image + condition shifts."""
        theta = self.ability + self.format_offsets.get(item_type, 0.0)
        if has_image:
            theta += self.image_effect
        if condition == MOTIVATION_CONDITION:
            theta += self.motivation_shift
        return theta


def skill_offsets(recognition: float = 0.0, production: float = 0.0) -> dict[str, float]:
    """Format offsets of an archetype: one for the recognition formats, one for the production formats."""
    offsets = {t: recognition for t in skill_formats(RECOGNITION)}
    offsets.update({t: production for t in skill_formats(PRODUCTION)})
    return offsets


@dataclass(frozen=True)
class Skills:
    """An archetype's format offsets in words: one for the recognition formats, one for the production
    formats, and some formats of its own. Turned into offsets when the models are made (`offsets`),
    so a format registered later (`formats.register`) gets its skill's offset too."""

    recognition: float = 0.0
    production: float = 0.0
    per_type: tuple[tuple[str, float], ...] = ()

    def offsets(self) -> dict[str, float]:
        offsets = skill_offsets(self.recognition, self.production)
        offsets.update(dict(self.per_type))
        return offsets


# The eight demo archetypes (label, ability, skills, image effect, motivation shift, malformed, multi).
ARCHETYPES: list[tuple[str, float, Skills, float, float, float, float]] = [
    ("strong recogniser", 1.3, Skills(0.9, -0.9), 0.0, -0.1, 0.03, 0.0),
    ("balanced", 1.0, Skills(), -0.1, 0.0, 0.03, 0.0),
    ("careful producer", 0.6, Skills(-0.3, 0.6, ((COMPLETION_CLOSED_TYPE, 0.3),)), 0.0, 0.2, 0.03, 0.0),
    ("image-blind", 0.7, Skills(0.2, -0.2), -1.2, 0.0, 0.04, 0.0),
    ("talks itself out of it", 0.5, Skills(0.3, -0.3), 0.0, -0.7, 0.04, 0.0),
    ("helped by reasoning", 0.0, Skills(0.2, -0.4), -0.2, 0.35, 0.04, 0.0),
    ("hedging guesser", -0.4, Skills(0.4, -0.6), -0.3, -0.1, 0.05, 0.08),
    ("format-fragile", -1.0, Skills(0.5, -1.2, ((SELECT_ERRORS_TYPE, -1.6),)), -0.4, -0.2, 0.06, 0.02),
]


#: Repeat noise per archetype (`SimModel.repeat_noise`): one noticeably unstable model, the rest
#: mostly repeating themselves, so that the demo's stability figures have something to show.
REPEAT_NOISE = {"hedging guesser": 0.9}
DEFAULT_REPEAT_NOISE = 0.15


def make_models(n: int = 8, seed: int = 0) -> list[SimModel]:
    """The first eight are the fixed archetypes; further models are seeded variations of them."""
    if n < 1:
        raise ValueError("need at least one simulated model")
    rng = random.Random(f"sim-models|{seed}")
    models: list[SimModel] = []
    for index in range(n):
        label, ability, skills, image, motivation, malformed, multi = ARCHETYPES[index % len(ARCHETYPES)]
        offsets = skills.offsets()
        if index >= len(ARCHETYPES):  # vary the copies so a large panel is not eight clones
            ability += rng.gauss(0.0, 0.5)
            offsets = {t: v + rng.gauss(0.0, 0.2) for t, v in offsets.items()}
            image += rng.gauss(0.0, 0.15)
            motivation += rng.gauss(0.0, 0.15)
        letters = letter_id(index)
        models.append(SimModel(
            key=f"sim-{letters.lower()}",
            display_name=f"Sim {letters} ({label})",
            ability=round(ability, 4),
            format_offsets={t: round(v, 4) for t, v in offsets.items()},
            image_effect=round(image, 4),
            motivation_shift=round(motivation, 4),
            malformed_rate=malformed,
            multi_select_rate=multi,
            repeat_noise=REPEAT_NOISE.get(label, DEFAULT_REPEAT_NOISE),
        ))
    return models
