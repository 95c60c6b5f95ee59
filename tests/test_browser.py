"""The web client in headless Chromium, served by the stack as the Procfile runs it.

The `page` fixture fails a test whose page threw, logged a console error or got a 5xx answer.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser import open_table

pytestmark = [pytest.mark.browser, pytest.mark.redis]


def test_the_client_loads(page: Page) -> None:
    response = page.goto("/")
    assert response is not None, "no answer for /"
    assert response.status == 200, f"/ answered {response.status}"
    assert "Spieltisch" in page.title()
    expect(page.locator("main")).to_have_count(1)


def test_how_to_play_opens_from_the_lobby_and_from_a_table(page: Page) -> None:
    page.goto("/")
    page.get_by_role("link", name="How to play Krass Kariert").click()
    expect(page).to_have_url(re.compile(r"#/rules/krasskariert$"))
    book = page.locator("article.rulebook")
    expect(book.get_by_role("heading", level=1)).to_have_text("Krass Kariert")
    for heading in ("Components", "Setup", "A turn", "End and scoring"):
        expect(book.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    expect(book.locator("table").first).to_be_visible()
    expect(book.locator("script, iframe")).to_have_count(0)
    book.get_by_role("link", name="Back to the lobby").first.click()
    expect(page.get_by_role("link", name="How to play Wobble")).to_be_visible()

    table = open_table(page, "pig10")
    page.get_by_role("link", name="How to play", exact=True).click()
    expect(page).to_have_url(re.compile(r"#/rules/pig10$"))
    expect(page.locator("article.rulebook h1")).to_have_text("Pig 10")
    assert table


def test_a_table_opened_with_a_time_preset_counts_down(page: Page) -> None:
    page.goto("/")
    page.fill("#player-name", "Ada")
    form = page.locator("form[aria-labelledby=pig10-title]")
    form.locator("#pig10-seat-1").select_option("heuristic:")
    form.locator("#pig10-clock").select_option(label="1 minute")
    form.locator("button[type=submit]").click()
    # Whoever is to move has a deadline a minute away at most, counted down by the seat.
    countdown = r"(1:00|0:[0-5]\d|\d+ s) left"
    expect(page.locator(".seat-list .deadline").first).to_have_text(re.compile(f"^, {countdown}$"))
    # Set off from the score before it: "score 0, 0:59 left", never "score 0 0:59 left".
    expect(page.locator(".seat-list li:has(.deadline)").first).to_have_text(
        re.compile(f"score -?\\d+, {countdown}")
    )


def test_a_page_left_while_it_loads_never_draws_over_the_next(page: Page) -> None:
    """The lobby waits for the bots' list; the reader goes on to a join page meanwhile. When the
    list arrives, the lobby draws (it then asks for its table lists) but not over the join page."""
    held: list[Route] = []

    def hold(route: Route) -> None:  # Playwright calls a function, not a bound builtin method
        held.append(route)

    page.route("**/v1/bots", hold)
    with page.expect_request("**/v1/bots"):
        page.goto("/")
    created = page.request.post("/v1/tables", data={"game": "pig10", "seats": 2})
    assert created.status == 201, created.text()
    page.goto(f"/#/tables/{created.json()['id']}/join/1")
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text("Join a table of Pig 10")
    assert len(held) == 1, "the lobby waits for the bots"
    with page.expect_request(re.compile(r"/v1/tables\?status=")):
        held[0].continue_()
    expect(heading).to_have_text("Join a table of Pig 10")
    expect(page.get_by_role("heading", name="Lobby")).to_have_count(0)


def test_the_skip_link_moves_the_focus_to_the_page_and_stays_on_it(page: Page) -> None:
    page.goto("/#/rules/pig10")
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_contain_text("Pig 10")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the game")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#content")).to_be_focused()
    assert page.evaluate("location.hash") == "#/rules/pig10"
    expect(heading).to_contain_text("Pig 10")


def test_the_join_page_names_the_game_by_its_title(page: Page) -> None:
    page.goto("/")
    created = page.request.post("/v1/tables", data={"game": "krasskariert", "seats": 3})
    assert created.status == 201, created.text()
    table = created.json()["id"]
    page.goto(f"/#/tables/{table}/join/1")
    expect(page.get_by_role("heading", level=1)).to_have_text("Join a table of Krass Kariert")
    expect(page.get_by_role("button", name="Take seat 2")).to_be_visible()
