"""More of what the web client does when the server fails it (tests/test_browser_errors.py has
the rest): a read that fails in the middle of a game is tried again with no event to ask for it,
and its message goes; a move that gets no answer is given up, and sent again with its
Idempotency-Key, also when it is clicked again after every try failed; the end of a game is said
while the table cannot be read; a move answered after its page was left leaves the page now open
alone; and a lobby left while it loads starts no timer.

The server is the stack as the Procfile runs it, on a real Redis; the failures are the browser's
own (`page.route`). Where the client waits on purpose, Playwright's clock runs its timers forward.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.bounds import bounded
from tests.browser import Clicker, Watched
from tests.live import call
from tests.stack import Stack
from tests.test_browser_errors import lose_table, refuse, table_read, wait_until
from tests.test_browser_players import SEATS_KEY, human_table, play_over_http, wait_for_my_turn

pytestmark = [pytest.mark.browser, pytest.mark.redis]


def moves_posted(url: str) -> bool:
    return url.endswith("/moves")


def seated(page: Page, stack: Stack) -> tuple[str, list[str]]:
    """A Pig 10 table of Ann (seat 1, to start) and Bob, with Ann's seat held by this browser."""
    table_id, tokens = human_table(stack.base)
    page.goto("/")
    page.evaluate(
        "([key, seats]) => localStorage.setItem(key, JSON.stringify(seats))",
        [SEATS_KEY, {table_id: {"0": tokens[0]}}],
    )
    return table_id, tokens


def version_of(stack: Stack, table_id: str) -> int:
    status, table = call(stack.base, "GET", f"/v1/tables/{table_id}")
    assert status == 200, table
    version: int = table["version"]
    return version


def run_until(what: str, done: Callable[[], bool], page: Page) -> None:
    """Run the page's clock a second at a time until `done()`, or fail naming `what`."""
    for _ in bounded(what, 200):
        if done():
            return
        page.clock.run_for(1000)
        page.wait_for_timeout(25)


def click_until_sent(page: Page, posted: list[Any], before: int = 0) -> None:
    """Click what the table offers until the page posts a move, the `before + 1`th of `posted`
    (a move may take two clicks)."""
    clicker = Clicker(page)
    for _ in bounded("no click sent a move", 10):
        if len(posted) > before:
            return
        clicker.click_next(done=lambda: len(posted) > before)


def test_a_read_that_fails_mid_game_is_tried_again_without_an_event(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """Bob's move makes it Ann's turn, and the page's read of it is refused: no other event will
    come to ask again, so the page reads again by itself after the Retry-After, says "Your turn"
    and drops what it said about the failure."""
    page.clock.install()
    table_id, tokens = seated(page, stack)
    play_over_http(stack.base, table_id, tokens, 1)
    page.goto(f"/#/tables/{table_id}")
    expect(page.locator("#turn")).to_have_text("Waiting for Bob.")
    refused: list[str] = []
    refusing = True

    def refuse_for_now(route: Route) -> None:
        if refusing:
            refused.append(route.request.url)
            refuse(route, pages, retry_after=30)
        else:
            route.continue_()

    page.route(table_read(table_id), refuse_for_now)
    play_over_http(stack.base, table_id, tokens, 1)
    assert call(stack.base, "GET", f"/v1/tables/{table_id}")[1]["to_act"] == [0]
    expect(page.locator(".log")).to_contain_text("Bob played")
    expect(page.locator(".table-page")).to_contain_text("the service cannot reach its storage")
    # Every read the move's events asked for has been refused once no more come.
    for _ in bounded("the page kept reading", 100):
        tried = len(refused)
        page.wait_for_timeout(200)
        if len(refused) == tried:
            break
    refusing = False
    expect(page.locator("#turn")).to_have_text("Waiting for Bob.")
    page.clock.run_for(30_500)
    expect(page.locator("#turn")).to_have_text("Your turn.")
    expect(page.locator(".table-page")).not_to_contain_text("the service cannot reach its storage")
    expect(page.locator(".feedback")).to_have_text("")


def test_a_move_without_an_answer_is_given_up_and_sent_again_with_its_key(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The move's request is never answered: the page gives it up after its timeout instead of
    waiting for good, sends the move again with the same Idempotency-Key, and it is played."""
    page.clock.install()
    table_id, _ = seated(page, stack)
    page.goto(f"/#/tables/{table_id}")
    wait_for_my_turn(page)
    version = version_of(stack, table_id)
    keys: list[str] = []

    def hang_first(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        keys.append(route.request.headers["idempotency-key"])
        if len(keys) > 1:
            route.continue_()
        # The first is never answered: a connection that died without a word.

    page.route(moves_posted, hang_first)
    click_until_sent(page, keys)
    run_until("the move sent again", lambda: len(keys) == 2, page)
    assert keys[0] == keys[1]
    expect(page.locator("#turn")).to_have_text("Waiting for Bob.")
    assert version_of(stack, table_id) > version
    expect(page.locator(".feedback")).to_have_text("")
    expect(page.locator(".trouble")).to_have_text("")


def test_a_move_clicked_again_after_its_tries_failed_keeps_its_key(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """Every try of a move is refused with a 503 (the server may have played it all the same):
    the player clicks the same move again at the same version, and it goes with the same
    Idempotency-Key, so the server could answer it with the first answer."""
    page.clock.install()
    table_id, _ = seated(page, stack)
    page.goto(f"/#/tables/{table_id}")
    wait_for_my_turn(page)
    posted: list[tuple[str, Any]] = []

    def refuse_four(route: Route) -> None:
        request = route.request
        if request.method != "POST":
            route.continue_()
            return
        posted.append((request.headers["idempotency-key"], request.post_data_json))
        if len(posted) <= 4:
            refuse(route, pages)
        else:
            route.continue_()

    page.route(moves_posted, refuse_four)
    click_until_sent(page, posted)
    run_until("the move tried four times", lambda: len(posted) == 4, page)
    expect(page.locator(".feedback")).to_contain_text("Your move was not confirmed")
    assert len({key for key, _ in posted}) == 1, "the tries of one move share one key"
    wait_for_my_turn(page)
    tried = len(posted)
    click_until_sent(page, posted, before=tried)
    (first_key, first_body), (key, body) = posted[0], posted[tried]
    assert body == first_body, "the same move was clicked again"
    assert key == first_key
    expect(page.locator("#turn")).to_have_text("Waiting for Bob.")


def test_the_end_of_a_game_is_said_while_the_table_cannot_be_read(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The stream brings the game's end while every read of the table is refused: the page says
    "game over", not "stream ended"."""
    table_id, tokens = human_table(stack.base)
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator("#turn")).to_have_text("Waiting for Ann.")
    page.route(table_read(table_id), lambda route: refuse(route, pages, retry_after=600))
    for _ in bounded("the game never ended", 1000):
        if call(stack.base, "GET", f"/v1/tables/{table_id}")[1]["status"] == "finished":
            break
        play_over_http(stack.base, table_id, tokens, 1)
    expect(page.locator(".log")).to_contain_text("Game over")
    expect(page.locator(".connection")).to_have_text("game over")


def test_a_move_answered_after_its_page_was_left_leaves_the_page_now_open(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """A move is still on its way when the player goes to the watch page; its answer then says
    the table stands before the move's version (the server lost moves): the page now open is not
    drawn again, nor told that the server lost moves."""
    table_id, _ = seated(page, stack)
    page.goto(f"/#/tables/{table_id}")
    wait_for_my_turn(page)
    version = version_of(stack, table_id)
    held: list[Route] = []
    page.route(
        moves_posted,
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    click_until_sent(page, held)
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator("#turn")).to_have_text("Waiting for Ann.")
    page.evaluate("() => { document.querySelector('.page').dataset.mark = 'watch'; }")
    problem = {
        "type": "/problems/stale-version",
        "title": "Stale version",
        "status": 409,
        "detail": "the table is at an older version",
        "current_version": version - 1,
    }
    with page.expect_request_finished(lambda request: request.method == "POST"):
        held[0].fulfill(
            status=409, content_type="application/problem+json", body=json.dumps(problem)
        )
    # The answer is read and refused in the page's next tasks; a few later it has been handled.
    for _ in range(5):
        page.evaluate("() => new Promise(resolve => setTimeout(resolve, 20))")
    expect(page.locator(".page[data-mark=watch]")).to_have_count(1)
    expect(page.locator(".notice")).to_have_text("")


def test_a_lobby_left_while_it_loads_starts_no_timer(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The lobby's first lists arrive after the reader went on to a rule book: the lobby asks
    for them no more."""
    page.clock.install()
    asked: list[str] = []
    held: list[Route] = []

    def hold_first(route: Route) -> None:
        asked.append(route.request.url)
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(lambda url: "/v1/tables?status=" in url, hold_first)
    page.goto("/")
    wait_until("the lobby asked for its lists", lambda: bool(held), page)
    page.goto("/#/rules/pig10")
    expect(page.locator("h1")).to_contain_text("Pig 10")
    with page.expect_request_finished(lambda request: request.url == held[0].request.url):
        held[0].continue_()
    asked_before = len(asked)
    page.clock.run_for(30_000)
    # Requests the timers made reach the route by the time the page has answered this one.
    assert page.evaluate("() => fetch('/health').then(answer => answer.status)") == 200
    assert len(asked) == asked_before, "the lobby left behind asked for its lists again"


def test_a_seat_whose_table_the_server_lost_has_nothing_left_to_click(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """It is Ann's turn when Bob leaves; the read that follows finds no table any more: the
    page says the table is gone and takes Ann's cards and buttons away, and nothing rejects
    unhandled."""
    table_id, tokens = seated(page, stack)
    page.goto(f"/#/tables/{table_id}")
    wait_for_my_turn(page)
    clickable = page.locator(".board [data-pick]:enabled, .choices button")
    expect(clickable).not_to_have_count(0)
    lose_table(page, table_id)
    status, _ = call(stack.base, "POST", f"/v1/tables/{table_id}/leave", token=tokens[1])
    assert status == 200
    expect(page.locator(".table-page")).to_contain_text("This table is gone from the server.")
    expect(clickable).to_have_count(0)


def test_a_move_refused_as_not_your_turn_is_news_and_the_table_is_read_again(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """A move answered `not-your-turn` (the turn went elsewhere before it arrived) is said as
    news, not as an error, and the page reads the table again to show whose turn it is."""
    table_id, _ = seated(page, stack)
    page.goto(f"/#/tables/{table_id}")
    wait_for_my_turn(page)
    problem = {
        "type": "/problems/not-your-turn",
        "title": "Not your turn",
        "status": 409,
        "detail": "seat 0 may not act now",
        "rule": "turn-order",
    }
    refused: list[str] = []

    def refuse_move(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        refused.append(route.request.url)
        route.fulfill(status=409, content_type="application/problem+json", body=json.dumps(problem))

    page.route(moves_posted, refuse_move)
    with page.expect_request(lambda request: table_read(table_id)(request.url)):
        click_until_sent(page, refused)
    expect(page.locator(".notice")).to_contain_text("no longer your turn")
    expect(page.locator(".feedback")).to_have_text("")
    wait_for_my_turn(page)


def test_a_seat_the_server_no_longer_knows_is_said_and_not_asked_for_again(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The table's read refuses this browser's token (the server lost the seat): the page says
    so, takes the moves away, and does not ask again every half minute for ever."""
    table_id, tokens = seated(page, stack)
    page.clock.install()
    page.goto(f"/#/tables/{table_id}")
    wait_for_my_turn(page)
    clickable = page.locator(".board [data-pick]:enabled, .choices button")
    refused: list[str] = []

    def refuse_token(route: Route) -> None:
        refused.append(route.request.url)
        problem = {"type": "/problems/invalid-token", "status": 401, "detail": "no seat here"}
        route.fulfill(status=401, content_type="application/problem+json", body=json.dumps(problem))

    page.route(table_read(table_id), refuse_token)
    status, _ = call(stack.base, "POST", f"/v1/tables/{table_id}/leave", token=tokens[1])
    assert status == 200
    expect(page.locator(".trouble")).to_contain_text("no longer knows this browser's seat")
    expect(clickable).to_have_count(0)
    page.clock.run_for(120_000)
    assert page.evaluate("() => fetch('/health').then(answer => answer.status)") == 200
    assert len(refused) == 1, "a refused token was asked for again"


def test_a_dismissed_table_is_not_listed_again_by_an_update_begun_before(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The lobby's update is under way (a table's read is slow) when a finished table is
    dismissed: the list drawn for the dismissal stands; the older update does not draw the
    dismissed table back when its slow read comes."""
    finished_id, finished_tokens = human_table(stack.base)
    for token in finished_tokens:  # both leave: the bots play it to the end
        assert call(stack.base, "POST", f"/v1/tables/{finished_id}/leave", token=token)[0] == 200
    for _ in bounded("the bots finished the table", 600):
        if call(stack.base, "GET", f"/v1/tables/{finished_id}")[1]["status"] == "finished":
            break
        page.wait_for_timeout(50)
    running_id, running_tokens = human_table(stack.base)
    page.goto("/")
    page.evaluate(
        "([key, seats]) => localStorage.setItem(key, JSON.stringify(seats))",
        [SEATS_KEY, {finished_id: {"0": finished_tokens[0]}, running_id: {"0": running_tokens[0]}}],
    )
    page.clock.install()
    page.goto("/")
    dismissed = page.locator(f".your-tables li[data-table='{finished_id}']")
    expect(dismissed).to_be_visible()
    expect(page.locator(f".your-tables li[data-table='{running_id}']")).to_be_visible()
    slow: list[Route] = []

    def hold_first(route: Route) -> None:
        if slow:
            route.continue_()
        else:
            slow.append(route)

    page.route(table_read(running_id), hold_first)
    page.clock.run_for(5100)  # the next update begins, and waits for the running table
    wait_until("the update under way", lambda: bool(slow), page)
    dismissed.get_by_role("button", name="Dismiss").click()
    expect(dismissed).to_have_count(0)
    slow[0].continue_()
    page.wait_for_timeout(1000)  # the older update's answer arrives and is drawn, or not
    # Asked once, not waited for: the next update would draw the list right again.
    assert dismissed.count() == 0, page.locator(".your-tables").inner_text()
