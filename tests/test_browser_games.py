"""Each game in the browser, end to end: opened in the lobby against bots, played to the end by
clicking what the table offers, watched live by a spectator, and stepped through in the replay.

The server is the stack as the Procfile runs it, on a real Redis, with real bot workers.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser import PHONE, Clicker, Watched, open_table
from tests.sixth_game import with_sixth_game

pytestmark = [pytest.mark.browser, pytest.mark.redis]

REGISTRY = with_sixth_game()
GAMES = REGISTRY.ids()
PLAYERS = {"krasskariert": 3, "wobble": 3}
"""Seats per game: more than two where a game plays differently with more."""
MAX_CLICKS = 3000
SHORT = {"wobble": {"score_limit": "1"}}
"""Options set in the lobby's form that keep a test game short (Wobble: one round)."""


def play_to_the_end(page: Page) -> int:
    clicks = 0
    clicker = Clicker(page)
    while not page.locator(".board .result").count():
        assert clicks < MAX_CLICKS, (
            f"no end after {clicks} clicks: {page.locator('#turn').text_content()}"
        )
        if clicker.click():
            clicks += 1
        else:
            page.wait_for_timeout(50)  # the bots' turn
        assert not page.locator(".feedback:not(:empty)").count(), page.locator(
            ".feedback"
        ).all_text_contents()
    return clicks


def check_text_alternatives(page: Page) -> None:
    pictures = page.locator(".board .card, .board .die")
    # A game without a table module of its own is shown by the generic table: text alone.
    assert pictures.count() > 0 or page.locator(".board .generic").count()
    for label in pictures.evaluate_all(
        "nodes => nodes.map(node => node.getAttribute('aria-label'))"
    ):
        assert (label or "").strip(), "a card or die without a text alternative"


@pytest.mark.parametrize("game", GAMES)
def test_a_game_against_bots_played_watched_and_replayed(game: str, pages: Watched) -> None:
    player = pages.open()
    table = open_table(player, game, PLAYERS.get(game, 2), SHORT.get(game, {}))
    check_text_alternatives(player)

    spectator = pages.open()
    spectator.goto(f"/#/tables/{table}/watch")
    expect(spectator.locator(".board .game")).to_be_visible()

    clicks = play_to_the_end(player)
    assert clicks > 0
    expect(player.locator("#turn")).to_contain_text("Game over")

    # The spectator's page followed the stream to the end without a reload, and shows no hand.
    expect(spectator.locator("#turn")).to_contain_text("Game over")
    assert spectator.locator(".board [data-pick]:enabled").count() == 0
    assert (
        spectator.locator(".board .result").text_content()
        == player.locator(".board .result").text_content()
    )

    last = int(
        player.evaluate(f"fetch('/v1/tables/{table}').then(r => r.json()).then(t => t.version)")
    )
    spectator.goto(f"/#/tables/{table}/replay/1")
    banner = spectator.locator(".replay-page .banner")
    expect(banner).to_contain_text(f"Version 1 of {last}")
    expect(spectator.locator(".audit")).to_contain_text("Audit passed")
    asked: list[str] = []
    spectator.on("request", lambda request: asked.append(request.url))
    spectator.locator("#replay-forward").click()
    expect(banner).to_contain_text(f"Version 2 of {last}")
    spectator.keyboard.press("ArrowRight")
    expect(banner).to_contain_text(f"Version 3 of {last}")
    # The log, scores and audit were read once: a step reads at most the versions ahead.
    api_reads = [url.split("/v1/tables/", 1)[1] for url in asked if "/v1/tables/" in url]
    assert all("/versions/" in path for path in api_reads), api_reads
    middle = last // 2
    spectator.locator("#replay-jump").fill(str(middle))
    spectator.locator("#replay-jump").press("Enter")
    expect(banner).to_contain_text(f"Version {middle} of {last}")
    spectator.keyboard.press("End")
    expect(banner).to_contain_text(f"Version {last} of {last}")
    expect(spectator.locator(".chart path.line")).to_have_count(PLAYERS.get(game, 2))
    audit = spectator.locator(".audit")
    expect(audit).to_contain_text("Audit passed")
    version = REGISTRY[game].info.rules_version
    expect(audit).to_contain_text(f"generator sha256-ctr/1, rules version {version}")
    export = audit.get_by_role("link", name="Download the signed log")
    exported = spectator.evaluate(
        "href => fetch(href).then(r => r.json())", export.get_attribute("href")
    )
    assert (exported["table"], exported["version"]) == (table, last)


@pytest.mark.parametrize("game", GAMES)
def test_a_table_fits_a_phone_screen(game: str, pages: Watched) -> None:
    page = pages.open(PHONE)
    open_table(page, game, PLAYERS.get(game, 2), SHORT.get(game, {}))
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the table is {overflow}px wider than a phone"
    check_text_alternatives(page)


def test_moves_can_be_made_with_the_keyboard_alone(pages: Watched) -> None:
    page = pages.open()
    open_table(page, "pig10")
    page.locator("#turn.mine").wait_for()
    before = page.locator(".log li").count()
    for _ in range(60):  # Tab through the page to the first card a move can use
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('[data-pick]:enabled, .choices button')"):
            break
    else:
        pytest.fail("Tab never reached a playable card")
    page.keyboard.press("Enter")
    for _ in range(60):  # a card with several ways to play it offers them as buttons: Tab on
        if "Ada (you) played" in page.locator(".log").inner_text():
            break
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('.choices button.choice')"):
            page.keyboard.press("Enter")
    expect(page.locator(".log li")).not_to_have_count(before)
    expect(page.locator(".log")).to_contain_text("Ada (you) played")
