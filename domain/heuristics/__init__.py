"""Rules of thumb a good player uses, one module per game: pure functions of a seat's view
and legal moves. Each module also declares its game (`GAME`, a `domain.game.Game`), as it is
the one module that sees both the game's rules and its heuristic."""
