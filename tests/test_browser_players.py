"""What a player meets in the browser (issue 23): the way back to their seats, leaving a table,
moves counted as moves, a line saying what to click, labelled piles, indicators that are not
buttons, the games' own words, the API contract as a page, and a table drawn again when the
server lost moves it showed.

The server is the stack as the Procfile runs it, on a real Redis, with real bot workers.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
import redis
import yaml
from playwright.sync_api import Page, Request, Route, expect

from service.client import OPENAPI
from tests.bounds import bounded
from tests.browser import Clicker, Watched, open_table
from tests.live import call
from tests.sixth_game import with_sixth_game
from tests.stack import Stack
from tests.test_lost_writes import lose_tail

pytestmark = [pytest.mark.browser, pytest.mark.redis]

GAMES = with_sixth_game().ids()
PLAYERS = {"krasskariert": 3, "wobble": 3}
SEATS_KEY = "spieltisch.seats"


def get_json(page: Page, path: str, token: str | None = None) -> Any:
    """`path` of the API, read by the page (so from the stack it serves)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return page.evaluate(
        "([path, headers]) => fetch(path, {headers}).then(r => r.json())", [path, headers]
    )


def held(page: Page) -> dict[str, dict[str, str]]:
    seats: dict[str, dict[str, str]] = json.loads(
        page.evaluate(f"localStorage.getItem('{SEATS_KEY}') || '{{}}'")
    )
    return seats


def moves_in(log: list[dict[str, Any]], game: str) -> int:
    """Moves in an event log, counted here apart from the client: the commands a seat issued
    (`meta.seat`) that appended at least one event of the game itself."""
    return len(
        {
            event["meta"]["command_id"]
            for event in log
            if event["meta"].get("seat") is not None and event["type"].startswith(f"{game}.")
        }
    )


def wait_for_my_turn(page: Page, clicks: int = 0) -> None:
    """Make `clicks` moves' worth of clicks, then wait until the bots wait for this seat."""
    clicker = Clicker(page)
    for _ in range(clicks):
        clicker.click_next()
    # The banner still says "Your turn" while a click's move is on its way; moves to click are
    # offered again only once the page holds the legal moves of the table's latest version.
    page.locator("#turn.mine").wait_for()
    page.locator(".board [data-pick]:enabled, .choices button.choice").first.wait_for()


def test_your_tables_lead_back_to_each_seat_and_forget_unknown_tables(page: Page) -> None:
    table = open_table(page, "pig10")
    page.goto("/#/")
    # A table this browser once sat at that the server does not know is dropped, not listed.
    page.evaluate(
        "([key, table]) => { const seats = JSON.parse(localStorage.getItem(key));"
        " seats.gone = {0: 'no-such-token'}; localStorage.setItem(key, JSON.stringify(seats)); }",
        [SEATS_KEY, table],
    )
    page.reload()
    mine = page.locator(".your-tables")
    expect(mine.get_by_role("heading", name="Your tables")).to_be_visible()
    entry = mine.locator(f"li[data-table='{table}']")
    expect(entry).to_contain_text("Pig 10 running")
    expect(entry).to_contain_text(re.compile(r"\d+ moves?"))
    expect(mine.locator("li")).to_have_count(1)
    assert "gone" not in held(page)
    assert table in held(page)

    entry.get_by_role("link", name=re.compile(r"^Play seat 1 \(Ada")).click()
    expect(page).to_have_url(re.compile(rf"#/tables/{table}\?seat=0$"))
    expect(page.locator(".board .game")).to_be_visible()
    expect(page.locator(".seat-list li.you")).to_contain_text("Ada (you)")


def test_a_seat_leaves_after_confirming_and_a_bot_plays_it_to_the_end(page: Page) -> None:
    table = open_table(page, "pig10")
    page.get_by_role("button", name="Leave this table…").click()
    expect(page.locator(".leave")).to_contain_text("Leave for good?")
    page.get_by_role("button", name="Stay").click()
    expect(page.get_by_role("button", name="Leave this table…")).to_be_visible()
    token = held(page)[table]["0"]
    assert get_json(page, f"/v1/tables/{table}", token)["seats"][0]["bot"] is None

    page.get_by_role("button", name="Leave this table…").click()
    page.get_by_role("button", name="Leave the table", exact=True).click()
    expect(page.locator("#turn")).to_contain_text(
        re.compile(r"You are no longer seated here: a bot plays your seat|Game over")
    )
    expect(page.locator(".seat-list li.you")).to_contain_text("handed to the heuristic bot")
    expect(page.locator(".leave button")).to_have_count(0)
    assert page.locator(".board [data-pick]:enabled").count() == 0
    assert get_json(page, f"/v1/tables/{table}", token)["seats"][0]["bot"] == "heuristic"

    # Two bots now: the game plays itself out, and the lobby keeps it as finished with its replay.
    expect(page.locator("#turn")).to_contain_text("Game over", timeout=60_000)
    page.goto("/#/")
    entry = page.locator(f".your-tables li[data-table='{table}']")
    expect(entry).to_contain_text(re.compile(r"Pig 10 finished after \d+ moves"))
    expect(entry.get_by_role("link", name="Replay")).to_have_attribute(
        "href", f"#/tables/{table}/replay"
    )
    entry.get_by_role("button", name="Dismiss").click()
    expect(entry).to_have_count(0)
    assert table not in held(page)


def test_moves_are_counted_as_moves_not_versions(page: Page) -> None:
    table = open_table(page, "pig10")
    wait_for_my_turn(page, clicks=3)
    # While the table waits for this seat nothing changes: the page and the log must agree.
    log = get_json(page, f"/v1/tables/{table}/events")
    moves = moves_in(log["events"], "pig10")
    assert moves >= 3
    assert log["version"] > moves  # the deal and the seats taken are versions, not moves
    expect(page.locator(".move-count")).to_have_text(f"{moves} moves")
    numbers = [
        int(value)
        for value in page.locator(".log li[data-move]").evaluate_all(
            "nodes => nodes.map(node => node.dataset.move)"
        )
    ]
    # Numbered by move, newest first, with no number skipped; a move may take several lines.
    assert sorted(set(numbers)) == list(range(1, moves + 1)), numbers
    assert numbers == sorted(numbers, reverse=True)
    expect(page.locator(".log li").filter(has_text="sat down at seat 1")).not_to_have_attribute(
        "data-move", re.compile(".")
    )

    last = log["events"][-1]
    page.goto(f"/#/tables/{table}/replay/{last['seq']}")
    expect(page.locator(".replay-page .banner")).to_contain_text(
        f"Version {log['version']} of {log['version']} (move {moves} of {moves})"
    )


BUTTON_LOOKS = """nodes => nodes.filter(node => {
  const picture = '[role=img], [role=img] *, .card, .card *, .die, .die *';
  if (node.matches(`button:enabled, ${picture}`) || !node.textContent.trim()) return false;
  const style = getComputedStyle(node);
  const box = node.getBoundingClientRect();
  if (!box.height || box.height > 48 || box.width > 320) return false;
  const sides = ['Top', 'Right', 'Bottom', 'Left'];
  const boxed = sides.every(side => parseFloat(style[`border${side}Width`]) > 0
    && style[`border${side}Style`] !== 'none');
  return boxed && parseFloat(style.borderTopLeftRadius) > 0;
}).map(node => node.outerHTML.slice(0, 120))"""
"""Button-sized words drawn as rounded boxes that are no enabled buttons. Pictures (cards, dice,
piles: `role=img`) look like what they show."""


HINTS: dict[str, str | re.Pattern[str]] = {
    "pig10": "click a card in your hand",
    "krumme10": "Your move: click one of your cards",
    # The deal may leave the first turn nothing that beats the bots' play: a pass, then.
    "krasskariert": re.compile("click cards side by side in your hand|pass: click a reserve card"),
    "wobble": "Your move:",
    "rollnbump": "Your move: click “Roll all dice”",
    "sprint": "Your move: choose one of the 2 buttons below the table",
}


@pytest.mark.parametrize("game", GAMES)
def test_each_table_says_what_to_click_and_only_moves_look_like_buttons(
    game: str, pages: Watched
) -> None:
    page = pages.open()
    table = open_table(page, game, PLAYERS.get(game, 2))
    wait_for_my_turn(page)
    expect(page.locator("#move-hint")).to_contain_text(HINTS[game])
    assert page.locator(".board *").evaluate_all(BUTTON_LOOKS) == []
    # Nothing to say to a spectator, who has nothing to click either.
    spectator = pages.open()
    spectator.goto(f"/#/tables/{table}/watch")
    expect(spectator.locator(".board .game")).to_be_visible()
    expect(spectator.locator("#move-hint")).to_be_empty()
    assert spectator.locator(".board *").evaluate_all(BUTTON_LOOKS) == []


def test_pig10_labels_the_pile_and_the_draw_pile_apart(page: Page) -> None:
    open_table(page, "pig10")
    draw = page.locator(".pig10 section.zone[aria-label='Draw pile']")
    expect(draw.get_by_role("heading", name="Draw pile")).to_be_visible()
    expect(draw.locator(".card.back")).to_have_count(1)
    pile = page.locator(".pig10 section.zone[aria-label^='Pile']")
    expect(pile.get_by_role("heading")).to_contain_text("Pile")
    expect(pile.locator(".card.back")).to_have_count(0)


def test_wobble_indicators_are_not_drawn_as_buttons_and_the_start_card_was_dealt(
    pages: Watched,
) -> None:
    player = pages.open()
    table = open_table(player, "wobble", 3, {"score_limit": "1"})
    for viewer in (player, pages.open()):
        if viewer is not player:
            viewer.goto(f"/#/tables/{table}/watch")
        expect(viewer.locator(".wobble .ring")).to_be_visible()
        assert viewer.locator(".wobble *").evaluate_all(BUTTON_LOOKS) == []
        start = viewer.locator(".log li").filter(has_text="as the starting card")
        expect(start).to_contain_text(re.compile(r"^\d*\.? ?The deal turned up .+ it acts for"))
        expect(viewer.locator(".log")).not_to_contain_text("as if")


def test_wobble_names_an_attack_turned_up_by_the_deal_as_the_dealers(
    pages: Watched, stack: Stack
) -> None:
    """The starting card can open an attack that no seat played: the table says the deal turned
    it up for the dealer. The deal is the service's to choose, so tables of three people are
    opened until one starts with an attack (a few in ten do)."""
    names = ["Ana", "Ben", "Cleo"]
    for _ in bounded("a Wobble deal that turns up an attack", 100):
        status, table = call(stack.base, "POST", "/v1/tables", {"game": "wobble", "seats": 3})
        assert status == 201, table
        for name in names:
            status, seat = call(
                stack.base, "POST", f"/v1/tables/{table['id']}/seats", {"name": name}
            )
            assert status == 201, seat
        state = call(stack.base, "GET", f"/v1/tables/{table['id']}")[1]["state"]
        if state["attack"] is not None and state["attack"]["dealt"]:
            break
        time.sleep(0.1)  # within the per-address limits on tables and seats
    page = pages.open()
    page.goto(f"/#/tables/{table['id']}/watch")
    line = page.locator(".wobble .attack .attack-line")
    dealer = names[state["dealer"]]
    expect(line).to_contain_text(
        f"turned up by the deal as the starting card (it acts for the dealer, {dealer})"
    )
    expect(line).not_to_contain_text("played by")


AFK_DECK = ",".join(
    [f"{symbol}=0" for symbol in ("skip", "+3", "+5", "minus20", "magnet", "reverse")]
    + [f"{symbol}=0" for symbol in ("half_hand", "card_exchange", "color_swap", "dodge", "you")]
    + [f"{symbol}=0" for symbol in ("mirror", "unlucky", "not_me", "capture", "double")]
    + ["afk=2"]
)
"""A Wobble deck of number cards and AFKs alone (two per colour), so AFKs come up often."""


def play_until_someone_waits(base: str, table: str, tokens: list[str]) -> tuple[int, Any]:
    """Play AFKs (passing one on where possible) and accept them, else anything, until a seat
    sits out waiting for seats owing it different numbers of turns (a pass makes an AFK cost
    two turns of each); that seat and the table's state."""
    for _ in bounded("a Wobble seat waiting for different numbers of turns", 400):
        shown = call(base, "GET", f"/v1/tables/{table}")[1]
        state = shown["state"]
        for seat, waits in enumerate(state["waiting_for"]):
            if len({turns for turns in waits if turns}) >= 2:
                assert sum(waits) == state["away"][seat], state
                return seat, state
        seat = shown["to_act"][0]
        legal = call(base, "GET", f"/v1/tables/{table}/moves", token=tokens[seat])[1]
        afk = [move for move in legal["moves"] if "afk" in str(move.get("cards"))]
        accept = [move for move in legal["moves"] if move["type"] == "accept"]
        body = {"move": (afk + accept + legal["moves"])[0], "expected_version": legal["version"]}
        status, answer = call(base, "POST", f"/v1/tables/{table}/moves", body, tokens[seat])
        assert status == 200, answer
    raise AssertionError("bounded() fails before this")


def waits_text(state: Any, seat: int, names: list[str], viewer: int | None = None) -> str:
    """What the away pill of `seat` must say: the seats it waits for in the order play reaches
    them, each with its turns (the first with the word), the viewer's own as "your"."""
    ring, way = state["seating"], state["direction"]
    at = ring.index(seat)
    onwards = [ring[(at + step * way) % len(ring)] for step in range(1, len(ring))]
    waits = state["waiting_for"][seat]
    owed = [other for other in onwards if waits[other]]
    whose = ["your" if other == viewer else f"{names[other]}'s" for other in owed]
    counts = [str(waits[other]) for other in owed]
    counts[0] += " turn" if waits[owed[0]] == 1 else " turns"
    return "away: waits for " + ", ".join(f"{w} {c}" for w, c in zip(whose, counts, strict=True))


def test_wobble_says_whose_turns_a_seat_sitting_out_waits_for(pages: Watched, stack: Stack) -> None:
    """An AFK seat comes back once each other seat has had its turns: its pill names them with
    their turns, for a spectator and for a seat it waits for ("your"). A table whose view gives
    no `waiting_for` (rules version 2) still shows the total alone."""
    names = ["Ana", "Ben", "Cleo", "Dan"]
    options = {"deck": AFK_DECK, "first_seat": 0}
    status, table = call(
        stack.base, "POST", "/v1/tables", {"game": "wobble", "seats": 4, "options": options}
    )
    assert status == 201, table
    tokens = []
    for name in names:
        status, seat = call(stack.base, "POST", f"/v1/tables/{table['id']}/seats", {"name": name})
        assert status == 201, seat
        tokens.append(seat["token"])
    away, state = play_until_someone_waits(stack.base, table["id"], tokens)
    pill = ".wobble .ring .seat:nth-child({}) .pill.away"
    where = state["seating"].index(away) + 1

    spectator = pages.open()
    spectator.goto(f"/#/tables/{table['id']}/watch")
    expect(spectator.locator(pill.format(where))).to_have_text(waits_text(state, away, names))
    expect(spectator.locator(".wobble .pill.away")).to_have_count(
        sum(1 for turns in state["away"] if turns)
    )

    waited_for = next(seat for seat, turns in enumerate(state["waiting_for"][away]) if turns)
    player = pages.open()
    player.goto("/")
    player.evaluate(
        "([key, seats]) => localStorage.setItem(key, JSON.stringify(seats))",
        [SEATS_KEY, {table["id"]: {str(waited_for): tokens[waited_for]}}],
    )
    player.goto(f"/#/tables/{table['id']}?seat={waited_for}")
    expect(player.locator(pill.format(where))).to_have_text(
        waits_text(state, away, names, viewer=waited_for)
    )

    def as_version_2(route: Route) -> None:
        answer = route.fetch()
        shown = answer.json()
        shown["state"]["waiting_for"] = [[] for _ in names]
        route.fulfill(response=answer, json=shown)

    former = pages.open()
    former.route(lambda url: url.endswith(f"/v1/tables/{table['id']}"), as_version_2)
    former.goto(f"/#/tables/{table['id']}/watch")
    turns = state["away"][away]
    expect(former.locator(pill.format(where))).to_have_text(
        f"away for {turns} turn{'' if turns == 1 else 's'}"
    )


def test_krass_kariert_explains_the_gaps_in_the_hand(page: Page) -> None:
    # Seat 2 leads, so this seat follows with a reserve to pass with: the gaps are shown.
    open_table(page, "krasskariert", 3, {"first_seat": "1"})
    wait_for_my_turn(page)
    expect(page.locator(".krasskariert button.gap").first).to_be_visible()
    legend = page.locator(".krasskariert .gap-legend")
    expect(legend).to_contain_text("Each + is a gap in your hand")
    expect(legend).to_contain_text("click a reserve card, then the +")


def test_the_api_link_shows_the_contract_readably(page: Page) -> None:
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="API").click()
    expect(page).to_have_url(re.compile(r"#/api$"))
    spec = yaml.safe_load(OPENAPI.read_text())
    docs = page.locator("article.apidocs")
    expect(docs.get_by_role("heading", level=1)).to_contain_text("Spieltisch API")
    operations = [
        operation["operationId"]
        for item in spec["paths"].values()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    expect(docs.locator(".api-operation")).to_have_count(len(operations))
    move = docs.locator("#makeMove")
    expect(move.get_by_role("heading")).to_contain_text("POST /v1/tables/{table_id}/moves")
    expect(move.locator("table").first).to_contain_text("Idempotency-Key")
    expect(move.get_by_role("link", name="MoveRequest")).to_be_visible()
    expect(docs.locator("#problems")).to_contain_text("stale-version")
    expect(docs.locator("#schema-Table")).to_contain_text("to_act")
    expect(docs.locator("script, iframe, style")).to_have_count(0)
    # An operation in the contents leads to its own section.
    docs.get_by_role("link", name="POST /v1/tables/{table_id}/leave").click()
    expect(page).to_have_url(re.compile(r"#/api/leaveTable$"))
    expect(docs.locator("#leaveTable")).to_be_in_viewport()
    expect(docs.get_by_role("link", name="Download openapi.yaml")).to_have_attribute(
        "href", "/openapi.yaml"
    )


def play_over_http(base: str, table: str, tokens: list[str], moves: int) -> int:
    """Make `moves` moves as the seats whose turn it is; the table's version after them."""
    for _ in range(moves):
        status, shown = call(base, "GET", f"/v1/tables/{table}")
        seat = shown["to_act"][0]
        status, legal = call(base, "GET", f"/v1/tables/{table}/moves", token=tokens[seat])
        body = {"move": legal["moves"][0], "expected_version": legal["version"]}
        status, answer = call(base, "POST", f"/v1/tables/{table}/moves", body, tokens[seat])
        assert status == 200, answer
    version: int = call(base, "GET", f"/v1/tables/{table}")[1]["version"]
    return version


def human_table(base: str) -> tuple[str, list[str]]:
    """A Pig 10 table of two people, seat 0 to start; its id and the seats' tokens."""
    status, table = call(
        base, "POST", "/v1/tables", {"game": "pig10", "seats": 2, "options": {"first_seat": 0}}
    )
    assert status == 201, table
    tokens = []
    for name in ("Ann", "Bob"):
        status, seat = call(base, "POST", f"/v1/tables/{table['id']}/seats", {"name": name})
        assert status == 201, seat
        tokens.append(seat["token"])
    return table["id"], tokens


def test_a_table_whose_server_lost_moves_is_drawn_again_as_it_stands(
    pages: Watched, stack: Stack, real_redis: redis.Redis
) -> None:
    """Redis lost the last moves the page showed and the table went on without them: the page
    says so and shows the table, the log and the move count as the server has them now."""
    table_id, tokens = human_table(stack.base)
    play_over_http(stack.base, table_id, tokens, 5)
    page = pages.open()
    page.goto(f"/#/tables/{table_id}/watch")
    expect(page.locator(".move-count")).to_have_text("5 moves")
    lose_tail(real_redis, table_id, 4)
    version = play_over_http(stack.base, table_id, tokens, 6)
    expect(page.locator(".notice")).to_contain_text("The server lost the last moves shown here")
    log = call(stack.base, "GET", f"/v1/tables/{table_id}/events")[1]
    assert log["version"] == version
    moves = moves_in(log["events"], "pig10")
    expect(page.locator(".move-count")).to_have_text(f"{moves} moves")
    numbers = page.locator(".log li[data-move]").evaluate_all(
        "nodes => nodes.map(node => Number(node.dataset.move))"
    )
    assert sorted(set(numbers)) == list(range(1, moves + 1)), "the log holds no lost move"


@pytest.mark.stack_env(SPIELTISCH_STREAM_MAX_SECONDS="300")  # no reconnect tells the page
def test_a_move_chosen_on_a_lost_version_draws_the_table_again(
    pages: Watched, stack: Stack, real_redis: redis.Redis
) -> None:
    """Redis lost the last two moves, and the table waits for this seat again with nothing
    appended since, so its open stream has nothing to tell: the move clicked on the lost version
    is refused as stale with an older version, and the page draws the table as it stands, where
    the next click plays."""
    table_id, tokens = human_table(stack.base)
    page = pages.open()
    page.goto("/")
    page.evaluate(
        "([key, seats]) => localStorage.setItem(key, JSON.stringify(seats))",
        [SEATS_KEY, {table_id: {"0": tokens[0]}}],
    )
    page.goto(f"/#/tables/{table_id}")
    page.locator("#turn.mine").wait_for()
    # The moves reach the page over its stream, so the stream has made its first read of the
    # log before the tail is lost: a stream that first read the log after the loss would say
    # so itself (`stream.Rewound`, the test above), not the refused move.
    version = play_over_http(stack.base, table_id, tokens, 4)
    expect(page.locator(".move-count")).to_have_text("4 moves")
    page.locator("#turn.mine").wait_for()
    log = call(stack.base, "GET", f"/v1/tables/{table_id}/events")[1]["events"]
    commands = [event["meta"].get("command_id") for event in log]
    # Seat 1's move, and seat 0's before it: the table waits for seat 0 again.
    first_lost = commands.index(commands[commands.index(commands[-1]) - 1])
    surviving = lose_tail(real_redis, table_id, version - first_lost)
    assert call(stack.base, "GET", f"/v1/tables/{table_id}")[1]["to_act"] == [0]
    clicker, sent = Clicker(page), []
    page.on("request", lambda r: sent.append(r) if r.method == "POST" else None)
    click_a_move(clicker, sent)
    expect(page.locator(".notice")).to_contain_text("The server lost the last moves shown here")
    page.locator("#turn.mine").wait_for()
    click_a_move(clicker, sent)
    for _ in bounded("the move clicked on the table as it stands never landed", 200):
        if call(stack.base, "GET", f"/v1/tables/{table_id}")[1]["version"] > surviving:
            break
        time.sleep(0.05)


def click_a_move(clicker: Clicker, sent: list[Request]) -> None:
    """Click until the page sends a request (`sent` is filled as it does): a move may take two
    clicks (a card, then how to play it)."""
    sent.clear()
    for _ in bounded("no click sent a move", 10):
        if sent:
            break
        clicker.click_next(done=lambda: bool(sent))
