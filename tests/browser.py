"""Debian's Chromium driven by Playwright (no browser download), and what a page did wrong.

`launch` is shared by the test fixtures (tests/conftest.py) and scripts/screenshots.py.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    Response,
    ViewportSize,
    expect,
)
from playwright.sync_api import Error as PlaywrightError

INSTALL_HINT = "install Debian's chromium (`apt-get install chromium`) or set SPIELTISCH_CHROMIUM"
DESKTOP = ViewportSize(width=1280, height=900)
PHONE = ViewportSize(width=390, height=844)

# The browser logs every answer >= 400 as a console error too. A 4xx answer is one the client
# may expect (a stale version, a move refused) and a 5xx one is recorded as an answer already.
ANSWER_LOGGED = re.compile(r"^Failed to load resource: the server responded with a status of \d")


class NoChromium(RuntimeError):
    pass


def chromium() -> str:
    """The Chromium to run: `SPIELTISCH_CHROMIUM`, else `chromium` on the PATH."""
    chosen = os.environ.get("SPIELTISCH_CHROMIUM")
    if chosen:
        if not Path(chosen).is_file():
            raise NoChromium(f"SPIELTISCH_CHROMIUM={chosen} is no file; point it at Chromium")
        return chosen
    found = shutil.which("chromium")
    if found is None:
        raise NoChromium(f"no `chromium` on the PATH; {INSTALL_HINT}")
    return found


def launch(playwright: Playwright) -> Browser:
    """Chromium, headless. Its sandbox refuses to run as root, so there it runs without one."""
    return playwright.chromium.launch(
        executable_path=chromium(), headless=True, chromium_sandbox=os.geteuid() != 0
    )


class Watched:
    """Pages, each recording its uncaught exceptions, console errors and 5xx answers."""

    def __init__(self, browser: Browser, base_url: str | None = None) -> None:
        self.browser = browser
        self.base_url = base_url
        self.problems: list[str] = []
        self.pages: list[Page] = []
        self.faked: set[str] = set()
        """URLs a test failed on purpose (`page.route`: a 5xx, a dropped connection): their
        answers and the console's lines about them are no problem of the server's."""

    def open(self, viewport: ViewportSize = DESKTOP) -> Page:
        context = self.browser.new_context(viewport=viewport, base_url=self.base_url)
        page = context.new_page()
        name = f"page {len(self.pages)} ({viewport['width']}x{viewport['height']})"
        page.on("pageerror", lambda error: self.problems.append(f"{name}: uncaught {error!r}"))
        page.on("crash", lambda _: self.problems.append(f"{name}: crashed"))
        page.on("console", lambda message: self._console(name, message))
        page.on("response", lambda response: self._response(name, response))
        self.pages.append(page)
        return page

    def _console(self, name: str, message: ConsoleMessage) -> None:
        where = message.location.get("url") or "inline"
        if where in self.faked and message.text.startswith("Failed to load resource"):
            return
        if message.type == "error" and not ANSWER_LOGGED.match(message.text):
            self.problems.append(f"{name}: console error at {where}: {message.text}")

    def _response(self, name: str, response: Response) -> None:
        if response.status >= 500 and response.url not in self.faked:
            request = response.request
            self.problems.append(f"{name}: {request.method} {response.url} -> {response.status}")

    def settle(self) -> list[str]:
        """The problems so far, once every open page has run what it had queued: a task and
        whatever it threw or rejected unhandled in that time."""
        for number, page in enumerate(self.pages):
            if not page.is_closed():
                try:
                    page.evaluate("() => new Promise(resolve => setTimeout(resolve))")
                except PlaywrightError as error:
                    self.problems.append(f"page {number}: did not settle: {error.message}")
        return list(self.problems)

    def close(self) -> None:
        for page in self.pages:
            page.context.close()


TABLE_URL = re.compile(r"#/tables/([^/?]+)")


def open_table(
    page: Page, game: str, players: int = 2, options: Mapping[str, str] | None = None
) -> str:
    """Open a table of `game` from the lobby, with `options` typed into its form: seat 1 for
    "Ada", heuristic bots in the others. Returns the table's id."""
    page.goto("/")
    page.fill("#player-name", "Ada")
    form = page.locator(f"form[aria-labelledby={game}-title]")
    form.locator(f"#{game}-seats").select_option(str(players))
    for seat in range(1, players):
        form.locator(f"#{game}-seat-{seat}").select_option("heuristic:")
    if options:
        form.locator("summary").click()
    for option, value in (options or {}).items():
        form.locator(f"#{game}-option-{option}").fill(value)
    form.locator("button[type=submit]").click()
    expect(page.locator(".board .game")).to_be_visible()
    match = TABLE_URL.search(page.url)
    assert match, page.url
    return match.group(1)


class Clicker:
    """Clicks one move's worth at a time of what a table offers, as a player would.

    A click that fails is usually the table changing under the pointer (a bot moved), and the
    next look finds something else. One that keeps failing while moves are offered would spin
    until the test's timeout naming nothing (once in CI, 2026-11-28, Wobble): after `PATIENCE`
    looks in a row that offered moves and clicked none, the test fails with Playwright's reasons
    and what the board offered.
    """

    SELECTORS = (".choices button.choice", ".board [data-pick]:enabled:not(.selected)")
    TRIED = 3
    """Offered things tried per look, in order, before the look counts as a miss."""
    PATIENCE = 20
    LOOKS = 200
    """Looks, 50 ms apart, that `click_next` makes while nothing is offered (bots moving)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.misses = 0

    def click(self) -> bool:
        """Click one offered move button, else one thing a legal move uses; False if nothing was
        offered or nothing offered could be clicked this time."""
        # A picked thing stays clickable (to take it back); the next click goes to something else.
        for selector in self.SELECTORS:
            targets = self.page.locator(selector)
            offered = targets.count()
            if not offered:
                continue
            reasons = []
            for index in range(min(offered, self.TRIED)):
                try:
                    targets.nth(index).click(timeout=1000)
                except PlaywrightError as error:
                    reasons.append(error.message)
                    continue
                self.misses = 0
                return True
            self.misses += 1
            assert self.misses < self.PATIENCE, self._stuck(selector, reasons)
            return False
        return False

    def click_next(self, done: Callable[[], bool] = lambda: False) -> bool:
        """Click once, looking again every 50 ms while nothing can be clicked, up to `LOOKS`
        looks or until `done()`; whether a click (or `done`) came."""
        for _ in range(self.LOOKS):
            if done() or self.click():
                return True
            self.page.wait_for_timeout(50)
        return False

    def _stuck(self, selector: str, reasons: list[str]) -> str:
        offered = self.page.locator(selector).evaluate_all("nodes => nodes.map(n => n.outerHTML)")
        turn = self.page.locator("#turn").text_content()
        return (
            f"{self.misses} looks in a row offered {selector} and none could be clicked "
            f"(turn: {turn!r}); offered: {offered}; the last reasons: {reasons}"
        )
