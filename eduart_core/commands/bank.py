"""`bank`: calibrate a dataset's items on its stored answers and freeze them as a new item bank version.

The work is `eduart_core.banks.freeze_bank` (the permission, the calibration, the one transaction);
this module reads the flags and prints one line. `show bank` and `show banks` read what it stored.
"""
from __future__ import annotations

import argparse

from ..errors import UserError
from ..vocab import IRT_AUTO, IRT_MODELS

#: The IRT models a bank may be fitted with (``auto``: the IRT views' default for the dataset).
BANK_MODELS = (IRT_AUTO, *IRT_MODELS)


def cmd_bank(args: argparse.Namespace) -> int:
    from ..banks import freeze_bank
    from ..cli import actor
    from ..selection import Selection
    from ..store import Store
    from ..vocab import IRT_SHORT_NAMES

    store = Store(args.db)
    if not store.exists():
        raise UserError(f"no store at {store.path}; run 'python -m eduart_core demo' or an import first")
    if not args.dataset:
        raise UserError("name the dataset whose items the bank calibrates: --dataset D")
    sel = Selection.from_args(args, dataset=args.dataset)
    frozen = freeze_bank(store, sel, args.irt_model, actor(args, store))
    draft = frozen.draft
    left = len(draft.items) - draft.n_items
    print(f"{frozen.dataset}: item bank version {frozen.version}: {draft.n_items} items with "
          f"{IRT_SHORT_NAMES.get(draft.model, draft.model)} parameters from {draft.n_examinees} examinees "
          f"(condition {sel.condition}), {left} left out; `show bank --dataset {frozen.dataset} --option "
          f"version={frozen.version}` lists it")
    return 0


def register(sub) -> None:
    from ..cli import add_actor_options, add_db_option
    from ..selection import Selection

    p = sub.add_parser(
        "bank", help="calibrate a dataset's items (IRT) and freeze them as a new item bank version",
        description="Fits an IRT model to the stored answers of a selection (one examinee per model, in one prompt "
                    "condition), leaves out items answered by too few examinees, items without variance and "
                    "underfitting items (each with its reason), fits the rest again and stores their parameters as "
                    "the dataset's next bank version. An earlier version is never changed. Needs the researcher "
                    "or admin role on a team store.")
    p.add_argument("--model", dest="irt_model", choices=BANK_MODELS, default=IRT_AUTO,
                   help="IRT model (default auto: the partial credit model for a dataset with partial-credit "
                        "formats, else Rasch)")
    Selection.add_arguments(p)
    add_actor_options(p)
    add_db_option(p)
    p.set_defaults(func=cmd_bank)
