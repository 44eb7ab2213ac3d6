"""`capture`: exercise pages -> `<exercise>/<question>.png` + `.html`; `exercise-site`: the local site."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from ..errors import UserError


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _sign_in(args) -> int:
    from ..capture.browser import save_sign_in_state

    if args.state is None:
        raise UserError("--sign-in needs --state FILE: where to save the browser state")

    def wait(page) -> None:
        input("Sign in in the browser window, then press Enter here to save the browser state... ")

    saved = save_sign_in_state(args.sign_in, args.state, wait, executable=args.browser)
    print(f"saved the browser state to {saved} (it holds your session cookies: keep it private, never commit it); "
          f"capture with --state {saved}")
    return 0


def cmd_capture(args) -> int:
    from ..capture.config import load_config
    from ..capture.run import capture_pages

    if args.sign_in:
        return _sign_in(args)
    if args.urls is None:
        raise UserError("give --urls FILE (one exercise page URL per line)")

    if args.delay is not None and args.delay < 0:
        raise UserError("--delay must be 0 or more seconds")
    if args.timeout is not None and args.timeout <= 0:
        raise UserError("--timeout must be more than 0 seconds")
    summary = capture_pages(args.urls, args.out, load_config(args.config), state=args.state, delay_s=args.delay,
                            timeout_s=args.timeout, browser=args.browser, parallel=args.parallel,
                            say=lambda line: print(line, flush=True))
    print(f"capture: {_count(summary.captured, 'page')} captured ({_count(summary.questions, 'question')}), "
          f"{summary.skipped} already captured, {len(summary.failures)} could not be captured; folder {args.out}")
    if summary.failures:
        print("run the same command again to retry the pages that could not be captured")
        return 2
    print(f"next: python -m eduart_core extract --input {args.out} --extractor A=... --extractor B=...")
    return 0


def cmd_site(args) -> int:
    from ..capture.site import exercise_urls, load_exercises, make_app, serve_site

    exercises = load_exercises()
    with serve_site(make_app(exercises, password=args.password), port=args.port) as url:
        urls = exercise_urls(url, exercises)
        if args.write_urls:
            args.write_urls.write_text("\n".join(urls) + "\n", encoding="utf-8")
            print(f"wrote {len(urls)} page URLs to {args.write_urls}")
        print(f"exercise site on {url} (Ctrl-C stops it); pages:", *urls, sep="\n", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
    return 0


def register(sub) -> None:
    parser = sub.add_parser("capture", help="answer, submit and screenshot interactive exercise pages for extract")
    parser.add_argument("--urls", type=Path, default=None, help="file with one page URL per line (optionally URL NAME)")
    parser.add_argument("--state", type=Path, default=None,
                        help="browser state file (Playwright storage state) saved after signing in by hand")
    parser.add_argument("--out", type=Path, default=Path("captured"), help="output folder (default captured/)")
    parser.add_argument("--config", type=Path, default=None,
                        help="platform configuration, JSON or TOML (default data/capture/local_site.json)")
    parser.add_argument("--delay", type=float, default=None, help="seconds between page visits (default: the config's)")
    parser.add_argument("--parallel", type=int, default=1,
                        help="pages captured at once, each in its own browser (default 1; only where the platform allows)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds to wait for a page or its revealed answers (default: the config's)")
    parser.add_argument("--sign-in", metavar="URL", default=None,
                        help="open URL in a visible Chromium, sign in by hand, save the browser state to --state")
    parser.add_argument("--browser", default=None, help="Chromium executable (default $BROWSER_PATH or /usr/bin/chromium)")
    parser.set_defaults(func=cmd_capture)

    site = sub.add_parser("exercise-site", help="serve the local exercise site (seven formats) on 127.0.0.1")
    site.add_argument("--port", type=int, default=8765)
    site.add_argument("--password", default=None, help="ask for this password first (to try capture --state)")
    site.add_argument("--write-urls", type=Path, default=None, help="write the page URLs to this file")
    site.set_defaults(func=cmd_site)
