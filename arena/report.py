"""What the arena writes: the standings table, the games as CSV or JSON, the ratings chart."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from arena.match import GameRecord
from arena.stats import Standing


def table(standings: Sequence[Standing]) -> str:
    """The standings as a Markdown table, strongest first."""
    lines = [
        "| bot | seats | win rate | 95% CI | fair share | p (better than fair) | rating |",
        "|---|---|---|---|---|---|---|",
    ]
    for standing in standings:
        lines.append(
            f"| {standing.entrant} | {standing.seats} | {standing.rate:.1%} "
            f"| {standing.low:.1%} - {standing.high:.1%} | {standing.fair:.1%} "
            f"| {format_p(standing.p_value)} | {standing.rating:+.0f} |"
        )
    return "\n".join(lines)


def format_p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else "< 0.0001"


COLUMNS = ("game", "index", "seats", "winners", "scores", "shares", "version", "table", "untimed")


def write_games(records: Sequence[GameRecord], path: Path) -> None:
    """The games, one per row (`.csv`) or as a list of objects (`.json`)."""
    if path.suffix == ".json":
        path.write_text(json.dumps([game_row(record) for record in records], indent=1))
        return
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, COLUMNS)
        writer.writeheader()
        for record in records:
            row = game_row(record)
            writer.writerow(
                {key: " ".join(map(str, v)) if isinstance(v, list) else v for key, v in row.items()}
            )


def game_row(record: GameRecord) -> dict[str, object]:
    row = asdict(record)
    del row["thinking"]
    return row


def chart(standings: Sequence[Standing], title: str, path: Path) -> None:
    """A PNG bar chart of the ratings, each bar labelled with its win rate and interval."""
    try:
        import matplotlib  # noqa: PLC0415 - optional, the arena extra

        matplotlib.use("Agg")
        from matplotlib import pyplot  # noqa: PLC0415
    except ImportError:
        raise SystemExit("the ratings chart needs matplotlib: pip install -e '.[arena]'") from None
    figure, axes = pyplot.subplots(figsize=(7, 0.6 * len(standings) + 1.5))
    names = [standing.entrant for standing in reversed(standings)]
    ratings = [standing.rating for standing in reversed(standings)]
    bars = axes.barh(names, ratings, color=["#3b7dd8" if r >= 0 else "#d8793b" for r in ratings])
    labels = [f"{s.rate:.0%} [{s.low:.0%}-{s.high:.0%}]" for s in reversed(standings)]
    axes.bar_label(bars, labels, padding=4)
    axes.axvline(0, color="black", linewidth=0.8)
    axes.set_xlabel("rating (Bradley-Terry, Elo scale); label: win rate [95% CI]")
    axes.set_title(title)
    axes.margins(x=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
