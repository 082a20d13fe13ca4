"""Credentials (the CredentialStore port): one item by the secret's hash (the
authorizer's one GetItem) and one in the listing, written in one transaction.
"""

from __future__ import annotations

from typing import Any

from ...domain.model import Credential
from .client import RESEND, TableClient, cancellation
from .codec import credential_attributes, credential_of
from .keys import CREDENTIALS_PK, credential_key, credential_listing_key


class DynamoDbCredentialStore:
    """Credentials by hash and by id."""

    def __init__(self, table: TableClient) -> None:
        self.table = table

    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        owner = f"credential {credential.id!r}"
        attributes = credential_attributes(credential)
        by_hash = {**credential_key(secret_hash), **attributes}
        listed = {
            **credential_listing_key(credential.id),
            **attributes,
            "hash": {"S": secret_hash},
        }
        ops = [
            {
                "Put": {
                    "TableName": self.table.table_name,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            }
            for item in (by_hash, listed)
        ]
        try:
            self.table._transact(ops, RESEND, consumed=False)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and reasons.failed_checks:
                raise ValueError(f"{owner}: its id or hash is already stored") from None
            raise

    def project_for(self, secret_hash: str) -> str | None:
        item = self.table._get(credential_key(secret_hash))
        if item is None or "revoked_at" in item:
            return None
        return item["project"]["S"]

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": CREDENTIALS_PK}},
        }
        if project is not None:
            params["FilterExpression"] = "#p = :p"
            params["ExpressionAttributeNames"] = {"#p": "project"}
            params["ExpressionAttributeValues"][":p"] = {"S": project}
        found = [credential_of(i) for i in self.table._query(**params)]
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def revoke_credential(self, credential_id: str, revoked_at: str) -> bool:
        listed = self.table._get(credential_listing_key(credential_id))
        if listed is None or "revoked_at" in listed:
            return False
        update = {
            "UpdateExpression": "SET revoked_at = :t",
            "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(revoked_at)",
            "ExpressionAttributeValues": {":t": {"S": revoked_at}},
        }
        keys = (
            credential_listing_key(credential_id),
            credential_key(listed["hash"]["S"]),
        )
        ops = [{"Update": {"TableName": self.table.table_name, "Key": k, **update}} for k in keys]
        try:
            self.table._transact(ops, RESEND, consumed=False)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and reasons.failed_checks:
                return False  # revoked meanwhile
            raise
        return True
