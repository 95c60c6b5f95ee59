"""Rules of thumb a good player uses, one module per game: pure functions of a seat's view and legal moves."""
