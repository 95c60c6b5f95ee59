"""A screenshot of a page of a running server, for the README.

Chromium runs as the browser tests run it (tests/browser.py): Debian's, driven by Playwright.

    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8000/ shot.png [--phone] [--full]
        [--wait-for CSS]

With `--game`, the URL is the server's and the shot is of a table of that game, opened in the
lobby against heuristic bots and played for `--clicks` clicks first (the README's pictures):

    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8000 docs/wobble.png --game wobble
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import Page, sync_playwright

from tests.browser import DESKTOP, PHONE, click_once, launch, open_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the page, on a server already running")
    parser.add_argument("png", type=Path, help="where to save the screenshot")
    parser.add_argument("--phone", action="store_true", help="390x844 instead of 1280x900")
    parser.add_argument("--full", action="store_true", help="the whole page, not the viewport")
    parser.add_argument("--wait-for", metavar="CSS", help="shoot once this element is visible")
    parser.add_argument("--game", help="open a table of this game and play a little first")
    parser.add_argument("--players", type=int, default=3, help="seats at that table")
    parser.add_argument("--clicks", type=int, default=8, help="clicks to play before the shot")
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            viewport = PHONE if args.phone else DESKTOP
            if args.game:
                page = browser.new_page(viewport=viewport, base_url=args.url)
                play(page, args.game, args.players, args.clicks)
            else:
                page = browser.new_page(viewport=viewport)
                page.goto(args.url)  # until "load": a live stream keeps the network busy for good
            if args.wait_for:
                page.locator(args.wait_for).first.wait_for()
            page.screenshot(path=args.png, full_page=args.full)
        finally:
            browser.close()
    print(f"{args.url} -> {args.png}")


def play(page: Page, game: str, players: int, clicks: int) -> None:
    """Open a table of `game` in the lobby and click `clicks` times, waiting out the bots."""
    open_table(page, game, players)
    for _ in range(clicks):
        for _ in range(200):
            if page.locator(".board .result").count() or click_once(page):
                break
            page.wait_for_timeout(50)
    page.wait_for_timeout(500)  # let the bots answer the last click


if __name__ == "__main__":
    main()
