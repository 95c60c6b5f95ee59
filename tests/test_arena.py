"""The arena: seat rotation, reproducible local games, the statistics, and what it writes."""

from __future__ import annotations

import csv
import itertools
import json
import math
import time
from collections import Counter
from pathlib import Path

import pytest

from arena.__main__ import local, main, pairings, progress_bar, run
from arena.journal import Journal
from arena.match import Entrant, GameRecord, execute, rotated
from arena.report import chart, game_row, table, write_games
from arena.stats import bradley_terry, p_above, standings, wilson
from domain.dice import commitment
from domain.table import CreateGame, TakeSeat

RANDOM = Entrant("random")
HEURISTIC = Entrant("heuristic")


def test_entrants_parse_with_and_without_a_level() -> None:
    assert Entrant.parse("search:hard") == Entrant("search", "hard")
    assert Entrant.parse("random") == Entrant("random")
    assert str(Entrant("search", "easy")) == "search:easy"


def test_rotation_sits_every_entrant_in_every_seat_equally() -> None:
    lineup = [Entrant("search"), RANDOM, RANDOM]
    seatings = rotated(lineup, 6)
    for seat in range(3):
        assert Counter(str(seating[seat]) for seating in seatings) == {"search": 2, "random": 4}
    assert all(Counter(map(str, seating)) == {"search": 1, "random": 2} for seating in seatings)


def test_every_entrant_starts_equally_often() -> None:
    """Seat 0 starts every game and the entrants rotate through it; options naming another
    first seat win."""
    lineup = [Entrant("search"), RANDOM, HEURISTIC]
    games = pairings("rollnbump", lineup, 6, {}, "start")
    assert {pairing.options["first_seat"] for pairing in games} == {0}
    assert Counter(str(pairing.seats[0]) for pairing in games) == {
        "search": 2,
        "random": 2,
        "heuristic": 2,
    }
    named = pairings("rollnbump", lineup, 3, {"first_seat": 2}, "start")
    assert {pairing.options["first_seat"] for pairing in named} == {2}


@pytest.mark.parametrize("game", ["pig10", "krumme10", "krasskariert", "wobble", "rollnbump"])
def test_seat_0_acts_first_in_each_arena_game(game: str) -> None:
    """As `play_locally` sets the table up."""
    tables, _ = local()
    players = 3 if game == "krasskariert" else 2
    pairing = pairings(game, [RANDOM] * players, 4, {}, "start")[1]
    seed = pairing.table_seed()
    create = CreateGame("t", game, players, dict(pairing.options), commitment(seed))
    table = execute(tables, None, create, seed)
    for number in range(players):
        table = execute(tables, table, TakeSeat(number, "r", None, bot="random"), seed)
    assert tables.may_act(table) == [0]


def test_wilson_interval_matches_the_textbook() -> None:
    low, high = wilson(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == pytest.approx(1.0)


def test_p_value_is_small_only_for_a_real_edge() -> None:
    assert p_above(200, 400, 0.5) > 0.4
    assert p_above(230, 400, 0.5) < 0.01
    assert p_above(120, 400, 0.25) < 0.05 < p_above(110, 400, 0.25)


def test_p_value_counts_split_wins_as_wins() -> None:
    """Two of three seats win Krass Kariert, each worth half a win: losing 108 of 400 games
    (survival 73% against a fair 2/3) is significant, though its shares (36.5%) would not be
    as whole wins against a fair third."""
    assert p_above(146, 400, 1 / 3, win=0.5) < 0.01 < p_above(146, 400, 1 / 3)
    assert p_above(133.5, 400, 1 / 3, win=0.5) > 0.4


def test_bradley_terry_recovers_three_to_one_odds() -> None:
    outcomes = [("a", "b", 1.0)] * 300 + [("a", "b", 0.0)] * 100
    ratings = bradley_terry(outcomes)
    assert ratings["a"] == pytest.approx(-ratings["b"])
    # Odds of 3 are 400 * log10(3) = 191 Elo points; the virtual draws pull it in a little.
    assert 180 < ratings["a"] - ratings["b"] < 191


def record(index: int, seats: list[str], shares: list[float]) -> GameRecord:
    winners = [seat for seat, share in enumerate(shares) if share]
    return GameRecord("pig10", index, seats, winners, [0] * len(seats), shares, 10)


def test_standings_rank_the_entrant_that_wins_more() -> None:
    records = [
        record(index, ["strong", "weak", "weak"], [1.0, 0.0, 0.0] if index % 3 else [0, 1.0, 0])
        for index in range(300)
    ]
    strong, weak = standings(records)
    assert (strong.entrant, strong.seats) == ("strong", 300)
    assert strong.fair == pytest.approx(1 / 3)
    assert strong.rate == pytest.approx(2 / 3)
    assert strong.p_value < 1e-6
    assert strong.low < strong.rate < strong.high
    assert weak.seats == 600
    assert weak.rate == pytest.approx(1 / 6)
    assert weak.p_value > 0.99
    assert strong.rating > 0 > weak.rating
    assert table([strong, weak]).splitlines()[2].startswith("| strong | 300 | 66.7% |")


def test_local_games_are_reproducible_and_rotate() -> None:
    first = run("pig10", [HEURISTIC, RANDOM], 6, seed="repeat")
    again = run("pig10", [HEURISTIC, RANDOM], 6, parallel=2, seed="repeat")
    assert [(r.scores, r.seats) for r in first] == [(r.scores, r.seats) for r in again]
    assert [r.index for r in first] == list(range(6))
    assert [r.seats for r in first[:2]] == [["heuristic", "random"], ["random", "heuristic"]]
    for played in first:
        assert sum(played.shares) == pytest.approx(1)
        assert len(played.thinking) == 2
    other = run("pig10", [HEURISTIC, RANDOM], 6, seed="other")
    assert [r.scores for r in other] != [r.scores for r in first]


def test_untimed_games_play_whole_budgets_on_any_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    lineup = [Entrant("search", "easy"), RANDOM]
    untimed = run("pig10", lineup, 2, seed="untimed", untimed=True)
    # A machine so slow that every reading of the clock is ten seconds after the last one.
    readings = itertools.count(step=10.0)
    monkeypatch.setattr(time, "perf_counter", lambda: next(readings))
    local.cache_clear()
    try:
        untimed_there = run("pig10", lineup, 2, seed="untimed", untimed=True)
        timed_there = run("pig10", lineup, 2, seed="untimed")
    finally:
        local.cache_clear()
    assert [r.untimed for r in untimed + timed_there] == [True, True, False, False]
    assert list(map(game_row, untimed_there)) == list(map(game_row, untimed)), "the same games"
    assert [(r.scores, r.version) for r in timed_there] != [
        (r.scores, r.version) for r in untimed
    ], "timed, search stopped at its first playout there"
    with pytest.raises(ValueError, match="untimed games are local"):
        run("pig10", lineup, 1, untimed=True, service="http://127.0.0.1:1")


def test_a_kept_run_goes_on_where_it_stopped(tmp_path: Path) -> None:
    lineup = [HEURISTIC, RANDOM]
    whole = run("pig10", lineup, 6, seed="kept")
    journal = Journal(tmp_path / "games.jsonl")
    run("pig10", lineup, 4, seed="kept", journal=journal)
    assert len(journal.path.read_text().splitlines()) == 4
    with journal.path.open("a") as file:
        file.write('{"pairing": {"game": "pig')  # killed while writing its fifth game
    counted: list[int] = []
    resumed = run(
        "pig10",
        lineup,
        6,
        seed="kept",
        journal=journal,
        progress=lambda done, total: counted.append(done),
    )
    assert counted == [5, 6], "only the two games not kept whole are played"
    assert list(map(game_row, resumed)) == list(map(game_row, whole)), "as if run in one go"
    assert len(journal.path.read_text().splitlines()) == 6
    assert len(run("pig10", lineup, 3, seed="kept", journal=journal)) == 3, "a shorter run"
    with pytest.raises(ValueError, match=r"games\.jsonl:1 is a game of another run"):
        run("pig10", [RANDOM, HEURISTIC], 6, seed="kept", journal=journal)
    with pytest.raises(ValueError, match="another run"):
        run("pig10", lineup, 6, seed="other", journal=journal)


def test_a_resumed_runs_progress_starts_at_the_games_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    advance = progress_bar("resumed")
    advance(5, 6)
    assert "5/6" in capsys.readouterr().err, "the four kept games and the fifth one played"
    advance(6, 6)
    assert "6/6" in capsys.readouterr().err


def test_games_and_chart_are_written(tmp_path: Path) -> None:
    records = run("krumme10", [RANDOM, HEURISTIC, RANDOM], 3, options={"variant": "showdown"})
    write_games(records, tmp_path / "games.csv")
    with (tmp_path / "games.csv").open() as written:
        rows = list(csv.DictReader(written))
    assert [row["seats"] for row in rows] == [" ".join(r.seats) for r in records]
    write_games(records, tmp_path / "games.json")
    assert json.loads((tmp_path / "games.json").read_text())[0]["scores"] == records[0].scores
    chart(standings(records), "krumme10", tmp_path / "ratings.png")
    assert (tmp_path / "ratings.png").read_bytes().startswith(b"\x89PNG")


def test_the_command_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "games.json"
    main(["rollnbump", "heuristic", "random", "-n", "4", "-j", "1", "--games-out", str(out)])
    printed = capsys.readouterr().out
    assert printed.startswith("| bot | seats | win rate |")
    assert {"heuristic", "random"} <= {line.split(" | ")[0][2:] for line in printed.splitlines()}
    assert len(json.loads(out.read_text())) == 4
    assert not math.isnan(sum(json.loads(out.read_text())[0]["shares"]))
