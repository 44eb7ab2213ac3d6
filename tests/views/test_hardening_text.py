"""User and model text is text: markdown/HTML neutralised for Streamlit, the HTML report and exports.

The unit tests pin the rules; the browser tests prove them where it matters: a real Streamlit
page and the real HTML report in Chromium, with hostile strings pointing at a canary server on
127.0.0.1. Zero requests may reach the canary, and no element may be injected.
"""
from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import plotly.graph_objects as go
import pytest

from eduart_core.exports import inert_figure, table_csv, table_latex
from eduart_core.text import inert_html, plain, truncate
from tests.browser_kit import READY, ROOT, chromium, require_browser, serve


def hostile(base: str) -> list[str]:
    """Strings a dataset, a model or a reviewer could hold; each tries to load or inject something."""
    return [
        f"![x]({base}/md.png)",
        f'<img src="{base}/html.png" id="injected">',
        f"[click me]({base}/link)",
        f"<{base}/autolink>",
        f"{base}/bare-url and www.example.com",
        ":red[alarm] :material/warning: :smile:",
        "$\\frac{1}{2}$ and $$x^2$$",
        '<b id="injected">bold</b> **strong** _em_ ~~gone~~ `code`',
        "# Heading\n\n    indented code\n- item\n1. first",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        f"<script>fetch('{base}/js')</script>",
        f"<style>body{{background:url({base}/css.png)}}</style>",
        f'<svg><image href="{base}/svg.png"/></svg>',
    ]


# ---------------------------------------------------------------- rules

def test_plain_escapes_every_markdown_and_html_construct():
    for text in hostile("http://127.0.0.1:9"):
        out = plain(text)
        # every ASCII punctuation character is backslash-escaped, so none can start markup
        unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", out)
        assert not re.search(r"[!-/:-@\[-`{-~]", unescaped), (text, out)
    assert plain("a\nb") == "a  \nb"  # line breaks kept as hard breaks
    assert plain("    code") == "\u00a0" * 4 + "code"  # never an indented code block
    assert plain(None) == "" and plain(12) == "12"


def test_truncate_marks_a_cut_and_reads_the_configured_limit(monkeypatch):
    assert truncate("short", 10) == ("short", False)
    shown, cut = truncate("word " * 100, 50)
    assert cut and shown.endswith(" …") and len(shown) <= 52
    monkeypatch.setenv("EDUART_MAX_SHOWN_CHARS", "20")
    assert truncate("x" * 21)[1] and not truncate("x" * 20)[1]
    assert truncate(None) == ("", False)


def test_csv_and_latex_exports_keep_text_inert():
    frame = pd.DataFrame({"model": ["=HYPERLINK(\"http://x\")", "+1+1", "@SUM(A1)", "-0.5", "plain <b>"],
                          "score": [0.1, 0.2, 0.3, 0.4, 0.5]})
    rows = table_csv(frame).decode().splitlines()[1:]
    assert [r.split(",")[0] for r in rows] == ["\"'=HYPERLINK(\"\"http://x\"\")\"", "'+1+1", "'@SUM(A1)", "-0.5",
                                              "plain <b>"]
    latex = table_latex(frame.assign(model=["a<b>", "x|y", "50%", "a_b", "line\nbreak"])).decode()
    assert r"a\textless{}b\textgreater{}" in latex and r"x\textbar{}y" in latex and r"50\%" in latex
    assert "line break" in latex


def test_inert_figure_escapes_data_strings_only():
    fig = go.Figure(go.Bar(x=["<b>m</b>", "ok"], y=[1, 2], name="<a href='http://x'>n</a>",
                           customdata=[["<i>c</i>"], ["d"]], hovertemplate="%{x}<br>%{y}<extra></extra>"))
    safe = inert_figure(fig)
    assert list(safe.data[0].x) == ["&lt;b&gt;m&lt;/b&gt;", "ok"]
    assert safe.data[0].name.startswith("&lt;a href=")
    assert safe.data[0].customdata[0][0] == "&lt;i&gt;c&lt;/i&gt;"
    assert safe.data[0].hovertemplate == "%{x}<br>%{y}<extra></extra>"  # our own formatting stays
    assert list(fig.data[0].x) == ["<b>m</b>", "ok"]  # the original is untouched
    assert inert_html("<a & 'b'>") == "&lt;a &amp; &#x27;b&#x27;&gt;"


# ---------------------------------------------------------------- browser helpers

class Canary:
    """An HTTP server on 127.0.0.1 standing for "outside": it counts every request it gets."""

    def __init__(self):
        self.hits: list[str] = []
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                canary.hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Canary:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


INJECTED_JS = """() => ({
  injected: document.querySelectorAll('#injected').length,
  images: [...document.querySelectorAll('img')].map(i => i.src),
  links: [...document.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || ''),
  bold: [...document.querySelectorAll('svg tspan')].filter(t => /bold/.test(t.getAttribute('style') || '')).length,
  text: document.body.innerText,
})"""


def _outside(requests: list[str], allowed: tuple[str, ...]) -> list[str]:
    return [u for u in requests if not u.startswith(allowed)]


SCRIPT = """
import json, sys
import streamlit as st
from eduart_core.text import plain
for text in json.load(open(sys.argv[1], encoding="utf-8")):
    st.markdown(plain(text))
    st.caption(plain(text))
st.error(plain("\\n".join(json.load(open(sys.argv[1], encoding="utf-8"))[:3])))
"""


@pytest.mark.browser
@pytest.mark.slow
def test_plain_text_in_a_real_streamlit_page_loads_nothing_and_injects_nothing(tmp_path):
    with Canary() as canary:
        strings = hostile(canary.base)
        (tmp_path / "strings.json").write_text(json.dumps(strings), encoding="utf-8")
        (tmp_path / "page.py").write_text(SCRIPT, encoding="utf-8")
        requests: list[str] = []
        with chromium() as browser, serve(tmp_path / "page.py", tmp_path / "streamlit.log", cwd=tmp_path,
                                          env={"PYTHONPATH": str(ROOT)},
                                          script_args=[str(tmp_path / "strings.json")]) as url:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url)
            page.wait_for_selector(READY, timeout=60000)
            page.wait_for_timeout(1000)  # let any image or font the content asked for be requested
            found = page.evaluate(INJECTED_JS)
    assert canary.hits == []
    assert _outside(requests, (url, "data:", "blob:")) == []
    assert found["injected"] == 0
    assert not [s for s in found["images"] if canary.base in s]
    assert not [h for h in found["links"] if canary.base in h or "example.com" in h]
    shown = found["text"].replace("\u2060", "")  # the invisible word joiner that keeps URLs from linking
    for text in (f"![x]({canary.base}/md.png)", ":red[alarm]", "$\\frac{1}{2}$", "<b id=\"injected\">bold</b>",
                 "| a | b |", "# Heading", f"{canary.base}/bare-url and www.example.com"):
        assert text in shown, text  # shown exactly as written


def _hostile_store(store, names: list[str]) -> None:
    """A store whose dataset title, model names and family come from ``names`` (with simple answers)."""
    from runner_items import fill_store

    from eduart_core.scoring.responses import add_responses
    from eduart_core.store.runs import create_run, ensure_model

    records = fill_store(store, 2, dataset="demo")
    for index, name in enumerate(names[:4]):
        key = f"m{index}"
        ensure_model(store, key, name, family=names[-1], provider="test", api_model_id=key)
        for condition in ("default", "motivation"):
            run_id = f"{key}:{condition}"
            create_run(store, run_id, "demo", key, condition, "import-eduart", status="completed")
            rows = [{"item_id": r["item_id"], "request_key": f"{run_id}/{r['item_id']}",
                     "raw_text": json.dumps({"Answers": [{"id": "A", "text": "TRUE"}] if (i + index) % 3 else []})}
                    for i, r in enumerate(records)]
            add_responses(store, run_id, rows)


@pytest.mark.browser
@pytest.mark.slow
def test_html_report_with_hostile_names_loads_nothing_and_injects_nothing(store, tmp_path):
    require_browser()
    from eduart_core.report import write_report

    with Canary() as canary:
        names = [f'<img src="{canary.base}/model.png" id="injected">', f"![m]({canary.base}/md.png)",
                 f"<a href=\"{canary.base}/a\" id=\"injected\">link</a>", "<b id=\"injected\">bold</b>",
                 f"<script>fetch('{canary.base}/js')</script>"]
        _hostile_store(store, names)
        out = tmp_path / "report.html"
        write_report(str(store.path), str(out), dataset="demo")
        html_text = out.read_text(encoding="utf-8")
        # the only images are the failure examples' embedded thumbnails (data: URIs, made by us)
        html_text = re.sub(r"<img class='thumb' alt='item image' src='data:image/jpeg;base64,[A-Za-z0-9+/=]+'>",
                           "", html_text)
        assert "<img" not in html_text.replace("&lt;img", "")
        requests: list[str] = []
        with chromium() as browser:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(out.as_uri())
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60000)
            page.wait_for_timeout(1000)
            found = page.evaluate(INJECTED_JS)
    assert canary.hits == []
    assert _outside(requests, ("file://", "data:", "blob:")) == []
    assert found["injected"] == 0 and all(src.startswith("data:image/jpeg;base64,") for src in found["images"])
    assert not [h for h in found["links"] if canary.base in h]
    assert found["bold"] == 0  # no markup from a name reached the figures
    assert names[0] in found["text"] and names[3] in found["text"]  # shown as typed (tables)
