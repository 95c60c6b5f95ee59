"""A screenshot of a page of a running server, for the README.

Chromium runs as the browser tests run it (tests/browser.py): Debian's, driven by Playwright.

    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8000/ shot.png [--phone] [--full]
        [--wait-for CSS]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from tests.browser import DESKTOP, PHONE, launch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the page, on a server already running")
    parser.add_argument("png", type=Path, help="where to save the screenshot")
    parser.add_argument("--phone", action="store_true", help="390x844 instead of 1280x900")
    parser.add_argument("--full", action="store_true", help="the whole page, not the viewport")
    parser.add_argument("--wait-for", metavar="CSS", help="shoot once this element is visible")
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page(viewport=PHONE if args.phone else DESKTOP)
            page.goto(args.url)  # until "load": a live stream keeps the network busy for good
            if args.wait_for:
                page.locator(args.wait_for).first.wait_for()
            page.screenshot(path=args.png, full_page=args.full)
        finally:
            browser.close()
    print(f"{args.url} -> {args.png}")


if __name__ == "__main__":
    main()
