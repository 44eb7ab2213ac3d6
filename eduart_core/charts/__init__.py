"""Plotly figure builders, one module per family of pages (no Streamlit, no SQL, no statistics).

- ``results``: the story figures (leaderboard, formats, motivation, images, scoring profiles) and
  the shared palette and layout helpers;
- ``psychometrics``: CTT, IRT, distractor and DIF figures;
- ``studies``: task and dimension figures of VQArt-Bench- and MUSE-style datasets;
- ``explorer``: the failure explorer's items x answers matrix.
"""
