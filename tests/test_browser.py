"""The web client in headless Chromium, served by the stack as the Procfile runs it.

The `page` fixture fails a test whose page threw, logged a console error or got a 5xx answer.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.browser, pytest.mark.redis]


def test_the_client_loads(page: Page) -> None:
    response = page.goto("/")
    assert response is not None, "no answer for /"
    assert response.status == 200, f"/ answered {response.status}"
    assert "Spieltisch" in page.title()
    expect(page.locator("main")).to_have_count(1)
