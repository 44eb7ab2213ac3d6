"""Capturing interactive exercise pages as `<exercise>/<question>.png` + `.html` for `extract`.

`config` reads a platform's selectors and answering strategies (a data file, not code), `steps`
performs the few answering actions a strategy is made of, `browser` opens the system Chromium,
`run` walks a list of pages (resumable, polite, failures named), and `site` / `site_pages` are
the small local exercise site the tests and the demo capture from.
"""
