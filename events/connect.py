"""Clients for the URLs the service is configured with: one Redis server, or a Redis Cluster.

`redis+cluster://[user:password@]host:port[,host:port...]` names a cluster by some of its nodes
(the client finds the rest), in the form the `limits` library's storage reads too, so the rate
limits take the same URL. Any other URL is redis-py's `Redis.from_url`.

The cluster client answers every command the store, snapshots, index, vault and quotas send:
each command and script touches the keys of one game only, all hash-tagged `game:{id}:...` into
one slot, and the few keys of no game (the table index's shards, the quota sets per address) are
each read and written on their own, never together in one command or transaction.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import unquote, urlsplit

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import ClusterError, RedisClusterException, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

CLUSTER_SCHEME = "redis+cluster"
CLUSTER_SETTLING: tuple[type[Exception], ...] = (ClusterError, TryAgainError, SlotNotCoveredError)
"""What a Redis Cluster raises while a master's replica takes over (CLUSTERDOWN, TRYAGAIN, a slot
with no master known, the client's retries used up): it answers again within seconds."""


def cluster_unreachable(error: BaseException) -> bool:
    """Whether `error` is a Redis Cluster client that reached none of its nodes while it read the
    cluster's layout again (as it does once a master died): redis-py raises a plain
    `RedisClusterException` then, which also reports mistakes of the caller's, so only one raised
    from a connection's failure counts as the cluster settling."""
    return isinstance(error, RedisClusterException) and isinstance(
        error.__cause__, (RedisConnectionError, RedisTimeoutError)
    )


OUTAGES: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError, *CLUSTER_SETTLING)
"""What Redis being down, restarting or loading its data raises (`BusyLoadingError` is a
`ConnectionError`), or a cluster failing over."""


def is_outage(error: BaseException) -> bool:
    """Whether `error` is the storage out of reach for a while, not a mistake: Redis down,
    restarting or loading, or a cluster failing over. The API answers 503 with Retry-After, the
    worker rides it out, a live stream ends for its client to come back."""
    return isinstance(error, OUTAGES) or cluster_unreachable(error)


def is_cluster(url: str) -> bool:
    return urlsplit(url).scheme == CLUSTER_SCHEME


def connect(url: str, **options: Any) -> redis.Redis:
    """A client of `url`, with redis-py's `options` (a socket timeout, say)."""
    if not is_cluster(url):
        return redis.Redis.from_url(url, **options)
    # Typed as a `Redis`: the cluster client has every command used here, with the same
    # signatures, but redis-py types the two apart.
    return cast(redis.Redis, RedisCluster(**cluster_settings(url), **options))


def cluster_settings(url: str) -> dict[str, Any]:
    """The `RedisCluster` arguments a cluster URL gives: its nodes and credentials."""
    parts = urlsplit(url)
    credentials, _, hosts = parts.netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    if parts.query:
        raise ValueError(f"a cluster URL takes no options, not {parts.query!r}")
    if parts.path.strip("/") not in ("", "0"):
        raise ValueError(f"a Redis Cluster has database 0 only, not {parts.path.strip('/')!r}")
    nodes = []
    for host in hosts.split(","):
        name, _, port = host.rpartition(":")
        if not name or not port.isdigit():
            raise ValueError(f"name each cluster node as host:port, not {host!r}")
        nodes.append(ClusterNode(name, int(port)))  # type: ignore[no-untyped-call]
    return {
        "startup_nodes": nodes,
        "username": unquote(username) or None,
        "password": unquote(password) or None,
    }


def same_server(client: redis.Redis, url: str | None, **options: Any) -> redis.Redis:
    """Another client to the server (or cluster) `client` talks to, with other `options`: for a
    cluster, made anew from its `url`; for one server, from `client`'s own settings."""
    if isinstance(client, RedisCluster):
        assert url is not None, "a cluster client comes from a URL"
        return connect(url, **options)
    pool = client.connection_pool
    settings = {**pool.connection_kwargs, **options}
    return redis.Redis(
        connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **settings)
    )
