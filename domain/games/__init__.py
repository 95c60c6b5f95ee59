"""One module per game, each exposing `RULES`, an object implementing `domain.rules.Rules`."""
