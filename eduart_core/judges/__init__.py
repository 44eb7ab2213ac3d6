"""Scoring open answers with rubrics: model judges, blind human grading, and what links them.

Rooms: `rubric` and `checks` (what a criterion asks and how code marks it), `prompts` (what a judge
sees and how its verdict is read), `launch` and `batch` (judging through the runner), `scoring`
(criterion marks to 0-1 scores), `grading` and `exchange` (blind human grades), `simulated` and
`demo` (the offline demo). The statistics are in `analysis.judges`; the views in `views.judges`.
"""
