"""People sit the exam: respondents on the same scale as the models.

Rooms: ``people`` (pseudonyms, registration as models of kind ``human``, who may see names),
``forms`` (sampled forms, what a respondent sees, answers in the format's own editor),
``sessions`` (the researcher's sessions and the respondent's sitting, every write checked),
``imports`` (exam results gathered elsewhere, through ``import-responses``), ``panel`` (the
simulated panel of the demo). The comparison with the models is ``analysis.humans`` and
``views.humans``.
"""
