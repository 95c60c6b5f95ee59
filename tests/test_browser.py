"""The web client in headless Chromium, served by the stack as the Procfile runs it.

The `page` fixture fails a test whose page threw, logged a console error or got a 5xx answer.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

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
    expect(page.locator(".seat-list .deadline").first).to_have_text(
        re.compile(r"^ (1:00|0:[0-5]\d|\d+ s) left$")
    )


def test_the_join_page_names_the_game_by_its_title(page: Page) -> None:
    page.goto("/")
    created = page.request.post("/v1/tables", data={"game": "krasskariert", "seats": 3})
    assert created.status == 201, created.text()
    table = created.json()["id"]
    page.goto(f"/#/tables/{table}/join/1")
    expect(page.get_by_role("heading", level=1)).to_have_text("Join a table of Krass Kariert")
    expect(page.get_by_role("button", name="Take seat 2")).to_be_visible()
