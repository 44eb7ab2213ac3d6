"""Team mode: who is acting (``Identity``), which roles allow which actions, and the roles table.

The library's write functions take an ``Identity`` and call ``identity.require(ACTION)`` before
writing; pages pass the signed-in person, the command line passes ``operator()``.
"""
from .identity import (
    NOT_SIGNED_IN,
    Identity,
    as_identity,
    claim_roles,
    cli_identity,
    from_claims,
    launched_by,
    local,
    operator,
    roles_claim,
    whose,
)
from .permissions import (
    ACTIONS,
    ADJUDICATE,
    ADJUDICATE_GRADES,
    ADJUDICATOR,
    ADMIN,
    BULK_ACCEPT,
    CHANGE_ROLES,
    DECIDE,
    FREEZE_BANK,
    GRADE,
    IMPORT_DECISIONS,
    IMPORT_GRADES,
    KEY_REVIEW,
    LAUNCH_RUN,
    OVERRIDE_SCORE,
    PRESENTER,
    REPAIR_PROMOTIONS,
    RESEARCHER,
    RESPONDENT,
    REVIEWER,
    ROLES,
    RUN_EXAMS,
    SEE_BLIND,
    SEE_RECORDS,
    SET_GRADING_ROUND,
    SET_ROUND,
    SIT_EXAM,
    STORY_ROLES,
    PermissionDenied,
)

__all__ = ["whose", "ACTIONS", "ADJUDICATE", "ADJUDICATE_GRADES", "ADJUDICATOR", "GRADE", "IMPORT_GRADES", "SET_GRADING_ROUND", "ADMIN", "BULK_ACCEPT", "CHANGE_ROLES", "DECIDE", "FREEZE_BANK",
           "IMPORT_DECISIONS", "KEY_REVIEW", "LAUNCH_RUN", "NOT_SIGNED_IN", "OVERRIDE_SCORE",
           "PRESENTER", "REPAIR_PROMOTIONS", "RESEARCHER", "RESPONDENT", "REVIEWER", "ROLES", "RUN_EXAMS", "SEE_BLIND", "SEE_RECORDS", "SET_ROUND",
           "SIT_EXAM", "STORY_ROLES", "Identity",
           "PermissionDenied", "as_identity", "claim_roles", "cli_identity", "from_claims", "launched_by", "local",
           "operator", "roles_claim"]
