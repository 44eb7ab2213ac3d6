"""The VQArt-Bench- and MUSE-style studies: published tables, demo benchmarks, respondents.

`references` loads the published tables as aggregate-only datasets; `scenes` draws the generated
pictures whose contents are known by construction; `vqa` and `muse` write the original demo items on
them; `respondents` simulates models that answer them with raw text (invalid answers included),
which the store's real parsers and scorers read like any model output.
"""
