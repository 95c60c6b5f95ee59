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
