"""What brings items and answers from files into the store.

- ``records``: canonical item records (.json, .jsonl) and the published EduArt folder layout;
- ``tables``: VLMEvalKit-style .tsv and .parquet item tables;
- ``responses``: model outputs produced elsewhere, one JSON object per line;
- ``harness`` (with ``harness_items``): lm-evaluation-harness and lmms-eval logged samples;
- ``vlmeval_predictions``: VLMEvalKit prediction tables, answers to the items of a table;
- ``answer_writer`` and ``option_reading``: what those two share (a model's run of outside answers);
- ``inspect_import`` (with ``inspect_logs``, the only reader of ``inspect_ai``, and ``inspect_map``):
  Inspect AI evaluation logs.
"""
