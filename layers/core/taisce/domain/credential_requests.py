"""Credentials minted and listed through the API (an admin credential's routes): the
request to mint one, and a page of a project's credentials."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from .model import Credential
from .scope import User

Label = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class CredentialRequest(BaseModel):
    """`{"user": U}` mints a user credential bound to U; `{}` a project credential.
    Admin credentials are made only by `taisce credentials create --admin`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    user: User | None = Field(default=None, description="Bind the credential to this end user.")
    label: Label | None = Field(default=None, description="A note for people (not secret).")


@dataclass(frozen=True)
class CredentialPage:
    credentials: list[Credential]
    next_cursor: str | None
