"""What the web client does when the server fails it: reads that fail are said and tried again
after the pause the server asked for, a stream that goes silent is opened again, a move whose
answer was lost is sent again with its Idempotency-Key, a table the server lost is said to be
gone, and the lobby keeps what it showed through an outage.

The server is the stack as the Procfile runs it, on a real Redis; the failures are the browser's
own (`page.route` answers a request, drops it or never answers it). Where the client waits on
purpose (Retry-After, the stream's silence), Playwright's clock runs the page's timers forward,
so no test waits those seconds out or measures them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, Request, Route, expect

from tests.bounds import bounded
from tests.browser import Clicker, Watched, open_table
from tests.live import call
from tests.stack import Stack
from tests.test_browser_players import wait_for_my_turn

pytestmark = [pytest.mark.browser, pytest.mark.redis]

UNAVAILABLE = {
    "type": "/problems/service-unavailable",
    "title": "Service unavailable",
    "status": 503,
    "detail": "the service cannot reach its storage; retry later",
}


def refuse(route: Route, pages: Watched, retry_after: int = 1) -> None:
    """Answer `route` as the server answers in an outage."""
    pages.faked.add(route.request.url)
    route.fulfill(
        status=503,
        headers={"Retry-After": str(retry_after)},
        content_type="application/problem+json",
        body=json.dumps(UNAVAILABLE),
    )


def open_table_for_two(stack: Stack) -> str:
    """A Pig 10 table for two people, nobody seated yet: it stays as it is until a test acts."""
    status, table = call(stack.base, "POST", "/v1/tables", {"game": "pig10", "seats": 2})
    assert status == 201, table
    return str(table["id"])


def table_read(table_id: str) -> Callable[[str], bool]:
    """The URL of the table itself (not its moves, events or stream)."""
    return lambda url: url.endswith(f"/v1/tables/{table_id}")


def stream_of(table_id: str) -> Callable[[str], bool]:
    return lambda url: url.endswith(f"/v1/tables/{table_id}/stream")


def lose_table(page: Page, table_id: str) -> None:
    """From now on the page reads the table as gone: the server answers it 404."""
    problem = {
        "type": "/problems/unknown-table",
        "title": "Unknown table",
        "status": 404,
        "detail": f"no table {table_id}",
    }
    page.route(
        table_read(table_id),
        lambda route: route.fulfill(
            status=404, content_type="application/problem+json", body=json.dumps(problem)
        ),
    )


def first_answer_lost(pages: Watched, keys: list[str]) -> Callable[[Route], None]:
    """A route for POSTs whose first request the server acts on but whose answer never reaches
    the page (the connection breaks); every POST's Idempotency-Key goes into `keys`."""

    def route_post(route: Route) -> None:
        request = route.request
        if request.method != "POST":
            route.continue_()
            return
        keys.append(request.headers["idempotency-key"])
        if len(keys) == 1:
            route.fetch()  # the server acts on it ...
            pages.faked.add(request.url)
            route.abort("connectionreset")  # ... and the page never hears of it
        else:
            route.continue_()

    return route_post


def wait_until(what: str, done: Callable[[], bool], page: Page) -> None:
    """Let the page run until `done()`, or fail naming `what`."""
    for _ in bounded(what, 400):
        if done():
            return
        page.wait_for_timeout(25)


def test_a_failed_first_read_is_tried_again_and_the_table_drawn_whole(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """Two reads refused with a 503: the page says so and reads again after the pause, with no
    event to ask it; then the table, its log from the start and the move count are all there."""
    table_id = open_table_for_two(stack)
    refused: list[str] = []

    def refuse_twice(route: Route) -> None:
        if len(refused) < 2:
            refused.append(route.request.url)
            refuse(route, pages)
        else:
            route.continue_()

    page.route(table_read(table_id), refuse_twice)
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator(".trouble")).to_contain_text("Could not read the table")
    expect(page.locator("#turn")).to_have_text("Waiting for 2 more players to take a seat.")
    expect(page.locator(".trouble")).to_have_text("")
    assert len(refused) == 2
    # The events the stream replayed while the table could not be read are in the log.
    expect(page.locator(".log")).to_contain_text("Table opened")
    status, _ = call(stack.base, "POST", f"/v1/tables/{table_id}/seats", {"name": "Bo"})
    assert status == 201
    expect(page.locator(".log")).to_contain_text("Bo sat down at seat 1")
    expect(page.locator(".feedback")).to_have_text("")


def test_a_stream_refused_with_a_503_waits_the_retry_after_it_was_given(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The stream is opened again only once its Retry-After has passed, not after the one
    second it waits when the server ends a stream."""
    table_id = open_table_for_two(stack)
    attempts: list[str] = []

    def refuse_stream(route: Route) -> None:
        attempts.append(route.request.url)
        refuse(route, pages, retry_after=7)

    page.clock.install()
    page.route(stream_of(table_id), refuse_stream)
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator(".connection")).to_have_text("reconnecting…")
    assert len(attempts) == 1
    page.clock.run_for(5000)
    # A request the page made meanwhile would reach the route before this one is answered.
    assert page.evaluate("() => fetch('/health').then(answer => answer.status)") == 200
    assert len(attempts) == 1, "the stream was asked again before its Retry-After"
    page.clock.run_for(2500)
    wait_until("the stream asked again after its Retry-After", lambda: len(attempts) == 2, page)


def test_a_silent_stream_is_opened_again(stack: Stack, pages: Watched, page: Page) -> None:
    """A stream whose connection says nothing, not even the keep-alives, is taken for dead and
    opened again; the page is live after it."""
    table_id = open_table_for_two(stack)
    hanging: list[Route] = []

    def hang_first(route: Route) -> None:
        if not hanging:
            hanging.append(route)  # never answered: a connection that died without a word
        else:
            route.continue_()

    page.clock.install()
    page.route(stream_of(table_id), hang_first)
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator("#turn")).to_have_text("Waiting for 2 more players to take a seat.")
    wait_until("the stream asked for", lambda: bool(hanging), page)
    expect(page.locator(".connection")).to_have_text("connecting…")
    page.clock.run_for(46_000)
    expect(page.locator(".connection")).to_have_text("reconnecting…")
    page.clock.run_for(2000)
    expect(page.locator(".connection")).to_have_text("live")


@pytest.mark.stack_env(SPIELTISCH_STREAM_KEEPALIVE="100", SPIELTISCH_STREAM_MAX_SECONDS="300")
def test_a_quiet_stream_lives_as_long_as_its_keepalives_say(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """A server that sends keep-alives every 100 s says so (`Stream-Keepalive`): its quiet
    stream is not taken for dead after the 45 s the page waits for a server that did not say."""
    table_id = open_table_for_two(stack)
    streams: list[str] = []
    page.on(
        "request",
        lambda request: streams.append(request.url) if stream_of(table_id)(request.url) else None,
    )
    page.clock.install()
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator(".connection")).to_have_text("live")
    for _ in range(4):  # 80 s of the page's time, in steps the page keeps up with
        page.clock.run_for(20_000)
        assert page.evaluate("() => fetch('/health').then(answer => answer.status)") == 200
    assert page.locator(".connection").inner_text() == "live"
    assert len(streams) == 1, "the quiet stream was opened again"


def test_a_table_the_server_lost_is_said_to_be_gone(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """A table read that finds no table any more (the server lost it) says so, with nothing
    left to click, instead of keeping the old table and rejecting in the background."""
    table_id = open_table_for_two(stack)
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator("#turn")).to_have_text("Waiting for 2 more players to take a seat.")
    lose_table(page, table_id)
    status, _ = call(stack.base, "POST", f"/v1/tables/{table_id}/seats", {"name": "Bo"})
    assert status == 201
    expect(page.locator(".trouble")).to_have_text("This table is gone from the server.")


def test_a_move_whose_answer_was_lost_is_sent_again_with_its_key(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The move lands but its answer never arrives (the connection breaks): the page sends it
    again with the same Idempotency-Key, the server answers with the first answer, and the page
    reports no refusal and no lost race."""
    open_table(page, "pig10")
    wait_for_my_turn(page)
    keys: list[str] = []
    replayed: list[str] = []

    lose_first_answer = first_answer_lost(pages, keys)

    def answered(request: Request) -> None:
        response = request.response()
        if request.method == "POST" and response is not None:
            replayed.append(response.headers.get("idempotent-replayed", ""))

    page.on("requestfinished", answered)
    page.route(lambda url: url.endswith("/moves"), lose_first_answer)
    clicker = Clicker(page)
    while not keys:
        clicker.click_next()
    wait_until("the move sent again", lambda: len(keys) == 2 and bool(replayed), page)
    assert keys[0] == keys[1]
    assert replayed == ["true"], "the second try was answered with the first try's answer"
    expect(page.locator(".feedback")).to_have_text("")
    expect(page.locator(".notice")).to_have_text("")
    expect(page.locator(".trouble")).to_have_text("")


def test_the_lobby_keeps_its_lists_through_an_outage(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """The lobby's update that cannot reach the server says so and keeps the tables it listed,
    instead of listing none."""
    table_id = open_table_for_two(stack)
    page.clock.install()
    page.goto("/")
    joinable = page.locator(f'.table-lists a[href="#/tables/{table_id}/join/0"]')
    expect(joinable).to_be_visible()
    page.route(lambda url: "/v1/tables?status=" in url, lambda route: refuse(route, pages))
    page.clock.run_for(5100)
    expect(page.locator(".lobby .trouble")).to_contain_text("Could not reach the server")
    expect(joinable).to_be_visible()
    page.unroute_all()
    page.clock.run_for(31_000)
    expect(page.locator(".lobby .trouble")).to_have_text("")


def test_a_seat_whose_answer_was_lost_is_taken_once_and_held(
    stack: Stack, pages: Watched, page: Page
) -> None:
    """Taking a seat by its invitation, the answer is lost after the server sat the player
    down: the page sends it again under the same Idempotency-Key, gets that seat and its token
    back, and plays it; the table has one seat taken, not two."""
    table_id = open_table_for_two(stack)
    keys: list[str] = []

    lose_first_answer = first_answer_lost(pages, keys)

    page.route(lambda url: url.endswith(f"/v1/tables/{table_id}/seats"), lose_first_answer)
    page.goto(f"/#/tables/{table_id}/join/0")
    page.fill("#join-name", "Ada")
    page.get_by_role("button", name="Take seat 1").click()
    expect(page.locator(".seat-list li.you")).to_contain_text("Ada (you)")
    assert len(keys) == 2
    assert keys[0] == keys[1], "sent again under its first key"
    status, table = call(stack.base, "GET", f"/v1/tables/{table_id}")
    assert status == 200
    assert [seat["name"] for seat in table["seats"] if seat["taken"]] == ["Ada"]
    expect(page.locator(".feedback")).to_have_text("")
