"""Games already played, kept one JSON line each as they end, so that a long run stopped midway
(a session ending, a machine restarting) goes on where it stopped: the same seeds, the games not
yet in the file. A row of hard bots takes hours on two CPUs; played in pieces, it is still the
one row its seeds name."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from arena.match import GameRecord, Pairing


class Journal:
    """The JSON-lines file at `path`: each line a game's record with the pairing it played."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def played(self, todo: Sequence[Pairing]) -> dict[int, GameRecord]:
        """The games of `todo` the file holds, by index. A game of the same index with other
        seeds, entrants, options or game is refused: the file belongs to another run."""
        if not self.path.exists():
            return {}
        by_index = {pairing.index: pairing for pairing in todo}
        kept: dict[int, GameRecord] = {}
        text = self.path.read_text()
        whole = text[: text.rfind("\n") + 1]
        if whole != text:
            # The last line of a run killed while writing it: dropped, and its game played again.
            with self.path.open("r+") as file:
                file.truncate(len(whole.encode()))
        for number, line in enumerate(whole.splitlines(), start=1):
            entry = json.loads(line)
            pairing = by_index.get(entry["record"]["index"])
            if pairing is None:
                continue  # a game past this run's last, kept by a longer run
            if entry["pairing"] != described(pairing):
                raise ValueError(
                    f"{self.path}:{number} is a game of another run than this one "
                    f"({entry['pairing']}); name another file"
                )
            kept[pairing.index] = GameRecord(**entry["record"])
        return kept

    def add(self, pairing: Pairing, record: GameRecord) -> None:
        """Append `record`, on disk before this returns."""
        line = json.dumps({"pairing": described(pairing), "record": asdict(record)})
        with self.path.open("a") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())


def described(pairing: Pairing) -> dict[str, object]:
    """What makes `pairing` the game it is, as JSON reads it back."""
    return {
        "game": pairing.game,
        "index": pairing.index,
        "seats": [str(entrant) for entrant in pairing.seats],
        "options": json.loads(json.dumps(pairing.options)),
        "seed": pairing.seed,
    }
