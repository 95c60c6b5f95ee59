"""The contract as generators take it: `openapi-python-client` generates every operation of
openapi.yaml with no warning, and the README's bot written against that client plays whole games
against the `spieltisch` command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_openapi import HTTP_METHODS, SPEC
from tests.test_package import ROOT

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "spieltisch_client"


def generate(into: Path) -> subprocess.CompletedProcess[str]:
    """The README's command: the client package `spieltisch_client` in `into`."""
    command = [
        str(GENERATOR),
        "generate",
        "--path",
        str(ROOT / "openapi.yaml"),
        "--meta",
        "none",
        "--output-path",
        PACKAGE,
        "--config",
        str(ROOT / "examples" / "openapi-python-client.yaml"),
    ]
    return subprocess.run(
        command, cwd=into, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the generated client package."""
    into = tmp_path_factory.mktemp("generated")
    done = generate(into)
    assert done.returncode == 0, done.stdout + done.stderr
    return into


def snake_case(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


def test_the_generator_takes_every_operation_without_a_warning(tmp_path: Path) -> None:
    done = generate(tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert output.strip() == f"Generating {PACKAGE}", output
    generated = {path.stem for path in (tmp_path / PACKAGE / "api").glob("*/*.py")}
    operations = {
        snake_case(operation["operationId"])
        for item in SPEC["paths"].values()
        for method, operation in item.items()
        if method in HTTP_METHODS
    }
    assert len(operations) == 22
    assert operations <= generated, operations - generated


def test_optional_tokens_let_spectators_use_the_plain_client(generated: Path) -> None:
    """Where a token is optional the generated call takes the plain `Client` (a spectator's);
    where the spec requires one, only an `AuthenticatedClient`."""
    api = generated / PACKAGE / "api"
    for module, spectators in [
        ("tables/get_table", True),
        ("seats/take_seat", True),
        ("events/list_events", True),
        ("moves/make_move", False),
        ("moves/list_legal_moves", False),
    ]:
        source = (api / f"{module}.py").read_text()
        sync = source.split("\ndef sync(", 1)[1]
        assert ("client: AuthenticatedClient | Client," in sync) is spectators, module


@pytest.mark.parametrize("game", ["pig10", "krasskariert"])
def test_the_readme_bot_on_the_generated_client_plays_a_whole_game(
    game: str, generated: Path, spieltisch_command: tuple[str, Path]
) -> None:
    base, _ = spieltisch_command
    bot = ROOT / "examples" / "generated_client_bot.py"
    done = subprocess.run(
        [sys.executable, str(bot), "--server", base, "--game", game],
        env={**os.environ, "PYTHONPATH": str(generated)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(rf"{game} \S+ finished: \{{.*'winners': \[.*", done.stdout.strip())
