"""scripts/same_play.py, the check that a faster engine still plays exactly as before."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from random import Random
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import same_play

from domain.bots import Turn
from domain.game import Game
from domain.registry import default_registry
from domain.rules import OptionError


def test_a_game_plays_as_it_did_at_head(capsys: pytest.CaptureFixture[str]) -> None:
    assert same_play.main(["pig10", "--games", "4"]) == 0
    assert capsys.readouterr().out.startswith("pig10: 4 games, ")


def test_a_heuristic_that_chooses_otherwise_is_named() -> None:
    game = default_registry().game("pig10")

    def last_move(turn: Turn, rng: Random) -> Any:
        return turn.moves[-1]

    other = replace(game, heuristic=last_move)
    with pytest.raises(
        same_play.Differs,
        match=r"game \d+, step \d+: (heuristic choices|generators after choosing) differ",
    ):
        play_games(game, other)


def play_games(new: Game, old: Game) -> None:
    for number in range(20):
        same_play.play_alike(new, old, number, {})


def test_seats_and_a_former_rules_version_can_be_fixed(capsys: pytest.CaptureFixture[str]) -> None:
    """`--players` seats every game alike, so options such as `first_seat` can be played (which
    two seats could not take); `--rules-version` plays a version the game still decides."""
    options = ["--options", '{"first_seat": 2}']
    with pytest.raises(OptionError):
        same_play.main(["pig10", "--games", "2", *options])
    assert same_play.main(["pig10", "--games", "2", "--players", "3", *options]) == 0
    assert same_play.main(["wobble", "--games", "2", "--rules-version", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("wobble: 2 games, ")
    wobble = default_registry().game("wobble")
    former = same_play.at_version(wobble, 2, argparse.ArgumentParser())
    assert (former.rules.info.rules_version, former.heuristic) == (2, wobble.heuristic)
    with pytest.raises(SystemExit):
        same_play.main(["pig10", "--players", "9"])
    with pytest.raises(SystemExit):
        same_play.main(["pig10", "--rules-version", "5"])
    assert "rules version 5 is not decided" in capsys.readouterr().err
