"""Python client for the Taisce memory API (sync and async) and its MCP server.

from taisce_client import Client
with Client() as taisce:  # TAISCE_URL, TAISCE_API_KEY
    bundle = taisce.recall("Where does Atlas work?", hops=2)
"""

from .async_client import AsyncClient
from .client import Client
from .errors import (
    ApiError,
    ConfigurationError,
    InvalidRecallControls,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    TaisceConnectionError,
    TaisceError,
    Unauthorized,
)
from .models import (
    Controls,
    Edge,
    Entity,
    EntityPage,
    ErasedCounts,
    Erasure,
    Fact,
    Health,
    MessagePage,
    MessageWithPassages,
    Neighbourhood,
    NewFact,
    NewMessage,
    Node,
    Passage,
    Recall,
    RecallControls,
    Report,
    RoleCounts,
    StoredMessage,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "ConfigurationError",
    "Controls",
    "Edge",
    "Entity",
    "EntityPage",
    "ErasedCounts",
    "Erasure",
    "Fact",
    "Health",
    "InvalidRecallControls",
    "InvalidRequest",
    "MessagePage",
    "MessageWithPassages",
    "Neighbourhood",
    "NewFact",
    "NewMessage",
    "Node",
    "NotFound",
    "Passage",
    "PayloadTooLarge",
    "RateLimited",
    "Recall",
    "RecallControls",
    "Report",
    "RoleCounts",
    "ServerError",
    "StoredMessage",
    "TaisceConnectionError",
    "TaisceError",
    "Unauthorized",
]
