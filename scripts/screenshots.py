"""A screenshot of a page of a running server, for the README.

Chromium runs as the browser tests run it (tests/browser.py): Debian's, driven by Playwright.

    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8000/ shot.png [--phone] [--full]
        [--wait-for CSS]

With `--game`, the URL is the server's and the shot is of a table of that game, opened in the
lobby against heuristic bots and played for `--clicks` clicks first (the README's pictures):

    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8000 docs/wobble.png --game wobble

With `--then PATH` as well, the shot is of that page of the server once the game is under way:
`--then /` is the lobby, listing the table under "Your tables".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import Page, sync_playwright

from tests.browser import DESKTOP, PHONE, Clicker, launch, open_table

MAX_MORE_CLICKS = 10
"""Clicks after `--clicks` to finish a move whose first things are picked."""


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
    parser.add_argument("--then", metavar="PATH", help="after playing, shoot this page instead")
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            viewport = PHONE if args.phone else DESKTOP
            if args.game:
                page = browser.new_page(viewport=viewport, base_url=args.url)
                play(page, args.game, args.players, args.clicks)
                if args.then:
                    page.goto(args.then)
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
    """Open a table of `game` in the lobby and click `clicks` times, waiting out the bots, then
    until the last move is made and it is this seat's turn again (the table says what to click)."""
    open_table(page, game, players)
    clicker = Clicker(page)
    ended = page.locator(".board .result")
    for click in range(clicks + MAX_MORE_CLICKS):
        if click >= clicks and not page.locator(".board [data-pick].selected").count():
            break  # a move half picked is clicked on to the end
        clicker.click_next(done=lambda: ended.count() > 0)
    page.wait_for_timeout(1000)  # the last move is sent and the banner moves on
    page.wait_for_function(
        "() => document.querySelector('#move-hint')?.textContent"
        " || document.querySelector('.board .result')"
    )
    page.wait_for_timeout(500)  # let the last answers settle
    page.evaluate("window.scrollTo(0, 0)")  # focus kept on a move button may have scrolled


if __name__ == "__main__":
    main()
