"""Credentials (the CredentialStore port): one item by the secret's hash (the
authorizer's one GetItem) and one in the listing, written in one transaction.

The last use is written on the item by hash only, by the authorizer (whose rights are
CRED# keys alone), and at most once a minute: a listing reads it from there.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import islice
from typing import Any

from ...domain.model import Credential
from .client import RESEND, TableClient, cancellation, error_code
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
        found = self.credential_for(secret_hash)
        return found.project if found else None

    def credential_for(self, secret_hash: str) -> Credential | None:
        item = self.table._get(credential_key(secret_hash))
        if item is None or "revoked_at" in item:
            return None
        return credential_of(item)

    def record_use(self, secret_hash: str, used_at: str, unless_after: str) -> None:
        try:
            self.table.client.update_item(
                TableName=self.table.table_name,
                Key=credential_key(secret_hash),
                UpdateExpression="SET last_used_at = :t",
                ConditionExpression="attribute_exists(PK) AND attribute_not_exists(revoked_at) "
                "AND (attribute_not_exists(last_used_at) OR last_used_at <= :a)",
                ExpressionAttributeValues={":t": {"S": used_at}, ":a": {"S": unless_after}},
            )
        except Exception as error:
            # Revoked, or a later use recorded meanwhile: nothing to write.
            if error_code(error) != "ConditionalCheckFailedException":
                raise

    def _listed(self, project: str | None, after: str | None = None) -> Any:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": CREDENTIALS_PK}},
        }
        if after is not None:
            params["KeyConditionExpression"] += " AND SK > :after"
            params["ExpressionAttributeValues"][":after"] = credential_listing_key(after)["SK"]
        if project is not None:
            params["FilterExpression"] = "#p = :p"
            params["ExpressionAttributeNames"] = {"#p": "project"}
            params["ExpressionAttributeValues"][":p"] = {"S": project}
        return self.table._query(**params)

    def _with_last_use(self, items: list[dict[str, Any]]) -> list[Credential]:
        """The listed credentials with their last use, read from their items by hash."""
        keys = [credential_key(i["hash"]["S"]) for i in items if "hash" in i]
        used = {
            i["PK"]["S"]: i["last_used_at"]["S"]
            for i in self.table._batch_get(keys, "PK, last_used_at")
            if "last_used_at" in i
        }
        found = []
        for item in items:
            at = used.get(credential_key(item["hash"]["S"])["PK"]["S"]) if "hash" in item else None
            found.append(replace(credential_of(item), last_used_at=at))
        return found

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        found = self._with_last_use(list(self._listed(project)))
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def credential_page(self, project: str, limit: int, after: str | None) -> list[Credential]:
        return self._with_last_use(list(islice(self._listed(project, after), limit)))

    def revoke_credential(
        self, credential_id: str, revoked_at: str, project: str | None = None
    ) -> bool:
        listed = self.table._get(credential_listing_key(credential_id))
        if listed is None or "revoked_at" in listed:
            return False
        if project is not None and listed["project"]["S"] != project:
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
