"""The arena: many seeded games between bots, and how strong each bot is."""
