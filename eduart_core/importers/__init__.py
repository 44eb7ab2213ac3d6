"""What brings items and answers from files into the store.

- ``records``: canonical item records (.json, .jsonl) and the published EduArt folder layout;
- ``tables``: VLMEvalKit-style .tsv and .parquet item tables;
- ``responses``: model outputs produced elsewhere, one JSON object per line.
"""
