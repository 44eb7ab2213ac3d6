"""What brings items and answers from files into the store.

- ``records``: canonical item records (.json, .jsonl) and the published EduArt folder layout;
- ``tables``: VLMEvalKit-style .tsv and .parquet item tables;
- ``responses``: model outputs produced elsewhere, one JSON object per line;
- ``inspect_import`` (with ``inspect_logs``, the only reader of ``inspect_ai``, and ``inspect_map``):
  Inspect AI evaluation logs.
"""
