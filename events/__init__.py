"""The event log: envelopes, their JSON codec and hash chain, upcasting, and the Redis store."""
