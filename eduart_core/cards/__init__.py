"""Exam cards: what a dataset's results were made from and what they are, in one file that travels.

A card (`cards.build.build_card`) gathers through the views what a reader needs to judge and reuse
a dataset's numbers: the item bank's hash and size, formats, languages, prompt hashes, the scoring
profile and scorer version, per model its provider, API id, dates, sampling settings and repeats,
the scores with their intervals (each table saying what its numbers are), judge calibration, the
human baseline, errata and the canary. `cards.page` draws it as a self-contained HTML page (text
escaped), `cards.eee` writes the same results in the Every Eval Ever schema, and `cards.reimport`
stores a card's results as a published (aggregate-only) dataset. The modules import nothing from
this package file, so it holds no code.
"""
