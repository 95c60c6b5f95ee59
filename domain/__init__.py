"""Pure game logic: the rules contract, the games, and the table aggregate. No I/O here."""
