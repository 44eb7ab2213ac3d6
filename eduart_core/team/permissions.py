"""Who may do what: the roles of a team and the one table of actions -> roles.

Why one table: every write function of the library checks its action here before it touches the
store, so a button hidden on a page is a courtesy, never the protection. Adding a role is one
entry in ``ROLES``; adding a guarded action is one entry in ``ACTIONS`` (and one ``require`` call
in the write function it guards). Which roles open a page is part of that page's entry in the app's page registry.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import UserError

REVIEWER = "reviewer"
ADJUDICATOR = "adjudicator"
RESEARCHER = "researcher"
PRESENTER = "presenter"
ADMIN = "admin"
RESPONDENT = "respondent"

#: Every role, with what it is for (the admin panel and `roles list` show these lines).
ROLES: dict[str, str] = {
    REVIEWER: "decides extraction fields, blind when the round says so; grades open answers blind",
    ADJUDICATOR: "settles the fields reviewers disagree on, sees every decision, reviews suspect keys, "
                 "adjudicates disputed grades",
    RESEARCHER: "launches runs, overrides scores, confirms and corrects answer keys, starts grading rounds, "
                "freezes item banks",
    PRESENTER: "reads the story pages",
    ADMIN: "sets rounds, grants roles, exports blind rounds, imports grades, freezes item banks",
    RESPONDENT: "sits exam forms (sees the questions only: never answers, keys or results)",
}


@dataclass(frozen=True)
class Action:
    """A guarded write (or a guarded read of blind decisions) and the roles allowed to do it."""

    phrase: str                 # "adjudicate a field": completes "… may not <phrase>"
    roles: frozenset[str]


def _action(phrase: str, *roles: str) -> Action:
    return Action(phrase, frozenset(roles))


DECIDE = "review.decide"
ADJUDICATE = "review.adjudicate"
BULK_ACCEPT = "review.bulk_accept"
IMPORT_DECISIONS = "review.import"
SET_ROUND = "review.set_round"
REPAIR_PROMOTIONS = "review.repair"
SEE_BLIND = "review.see_blind"
KEY_REVIEW = "keys.review"
OVERRIDE_SCORE = "scores.override"
LAUNCH_RUN = "runs.launch"
CHANGE_ROLES = "roles.change"
SIT_EXAM = "exams.sit"
RUN_EXAMS = "exams.run"
GRADE = "grades.grade"
ADJUDICATE_GRADES = "grades.adjudicate"
SET_GRADING_ROUND = "grades.set_round"
IMPORT_GRADES = "grades.import"
FREEZE_BANK = "banks.freeze"
SEE_RECORDS = "records.see_others"

#: The one table of guarded actions -> the roles that may perform them.
ACTIONS: dict[str, Action] = {
    DECIDE: _action("decide review fields", REVIEWER),
    ADJUDICATE: _action("adjudicate review fields", ADJUDICATOR),
    BULK_ACCEPT: _action("accept fields in bulk", REVIEWER),
    IMPORT_DECISIONS: _action("import review decisions", ADMIN),
    SET_ROUND: _action("change the settings of a review round", ADMIN),
    REPAIR_PROMOTIONS: _action("promote settled pages whose promotion was interrupted", ADMIN),
    SEE_BLIND: _action("see or export other reviewers' decisions of an unsettled blind round", ADJUDICATOR, ADMIN),
    KEY_REVIEW: _action("confirm or correct an answer key", RESEARCHER, ADJUDICATOR),
    OVERRIDE_SCORE: _action("override a score", RESEARCHER),
    LAUNCH_RUN: _action("launch, resume or cancel model runs", RESEARCHER),
    CHANGE_ROLES: _action("grant or revoke roles", ADMIN),
    SIT_EXAM: _action("sit an exam form", RESPONDENT),
    RUN_EXAMS: _action("set up, watch and close exam sessions (with the respondents' names)", RESEARCHER, ADMIN),
    GRADE: _action("grade open answers", REVIEWER),
    ADJUDICATE_GRADES: _action("adjudicate the grades graders disagree on", ADJUDICATOR),
    SET_GRADING_ROUND: _action("start a grading round or change its graders per answer", RESEARCHER, ADMIN),
    IMPORT_GRADES: _action("import grades", ADMIN),
    FREEZE_BANK: _action("freeze an item bank (a new calibrated version)", RESEARCHER, ADMIN),
    SEE_RECORDS: _action("see another rater's record (their overruled decisions, agreement and severity)",
                         ADJUDICATOR, ADMIN),
}

#: Roles that read the story pages: everyone but a respondent, who never sees results (the app's page
#: registry names the roles of every other page).
STORY_ROLES: frozenset[str] = frozenset(ROLES) - {RESPONDENT}

class PermissionDenied(UserError):
    """The acting person's roles do not allow this action; nothing was written."""

    def __init__(self, who: str, action: str):
        spec = ACTIONS[action]
        needs = " or ".join(sorted(spec.roles))
        self.action = action
        super().__init__(f"{who} may not {spec.phrase}: that needs the {needs} role")


def known_roles(values: Iterable[str]) -> frozenset[str]:
    """The role names among ``values`` (a token's groups hold other names too)."""
    return frozenset(str(v).strip().lower() for v in values if str(v).strip().lower() in ROLES)


def check_role(role: str) -> str:
    """A role name, or one line listing the roles."""
    name = (role or "").strip().lower()
    if name not in ROLES:
        raise UserError(f"unknown role {role!r}; the roles are {', '.join(ROLES)}")
    return name


def allowed(roles: Iterable[str], action: str) -> bool:
    """Whether any of ``roles`` may perform ``action``."""
    return bool(ACTIONS[action].roles & set(roles))
