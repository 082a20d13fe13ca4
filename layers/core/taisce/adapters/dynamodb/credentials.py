"""Credentials (the CredentialStore port): one item by the secret's hash (the
authorizer's one GetItem), one in the listing of every credential (revoke by id, the
CLI's list of all) and a copy in the project's own partition (the API's listing, which
so reads one project's credentials whatever the number of others), written in one
transaction. Credentials stored before the copies existed are copied the first time
their project is listed (`_backfill`), once per project, and a process that has seen
the marker does not read it again. A listing reads revocations
and last uses from the items by hash, so a copy is never updated after it is written.

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
from .keys import (
    CREDENTIALS_BACKFILLED_SK,
    CREDENTIALS_PK,
    credential_key,
    credential_listing_key,
    item_key,
    project_credential_key,
    project_credentials_pk,
)


class DynamoDbCredentialStore:
    """Credentials by hash and by id."""

    def __init__(self, table: TableClient) -> None:
        self.table = table
        # Projects whose backfill this process has seen done: a marker is never removed
        # while older credentials could still lack copies, so it need not be read again.
        self._backfilled: set[str] = set()

    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        owner = f"credential {credential.id!r}"
        attributes = credential_attributes(credential)
        by_hash = {**credential_key(secret_hash), **attributes}
        listed = {
            **credential_listing_key(credential.id),
            **attributes,
            "hash": {"S": secret_hash},
        }
        copy = {**listed, **project_credential_key(credential.project, credential.id)}
        ops = [
            {
                "Put": {
                    "TableName": self.table.table_name,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            }
            for item in (by_hash, listed, copy)
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
        """Every credential (no project), or the project's from its own partition."""
        if project is None:
            pk = CREDENTIALS_PK
        else:
            self._backfill(project)
            pk = project_credentials_pk(project)
        # "C#" sorts after the partition's marker and before every "C#<id>".
        start = credential_listing_key(after)["SK"]["S"] if after is not None else "C#"
        return self.table._query(
            KeyConditionExpression="PK = :pk AND SK > :after",
            ExpressionAttributeValues={":pk": {"S": pk}, ":after": {"S": start}},
        )

    def _backfill(self, project: str) -> None:
        """Copies into the project's partition of its credentials stored before the
        copies existed (read from the listing of all by a filter, once per project),
        then the marker that says so. A copy already there is kept."""
        if project in self._backfilled:
            return
        marker = item_key(project_credentials_pk(project), CREDENTIALS_BACKFILLED_SK)
        if self.table._get(marker) is not None:
            self._backfilled.add(project)
            return
        older = self.table._query(
            KeyConditionExpression="PK = :pk",
            FilterExpression="#p = :p",
            ExpressionAttributeNames={"#p": "project"},
            ExpressionAttributeValues={":pk": {"S": CREDENTIALS_PK}, ":p": {"S": project}},
        )
        for item in older:
            self._put_new({**item, **project_credential_key(project, item["id"]["S"])})
        self._put_new(marker)
        self._backfilled.add(project)

    def _put_new(self, item: dict[str, Any]) -> None:
        try:
            self.table.client.put_item(
                TableName=self.table.table_name,
                Item=item,
                ConditionExpression="attribute_not_exists(PK)",
            )
        except Exception as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise

    def _with_last_use(self, items: list[dict[str, Any]]) -> list[Credential]:
        """The listed credentials with their last use and revocation, read from their
        items by hash (the ones the authorizer reads and revocation writes)."""
        keys = [credential_key(i["hash"]["S"]) for i in items if "hash" in i]
        held = {
            i["PK"]["S"]: i for i in self.table._batch_get(keys, "PK, last_used_at, revoked_at")
        }
        found = []
        for item in items:
            listed = credential_of(item)
            if "hash" not in item:
                found.append(replace(listed, last_used_at=None))
                continue
            by_hash = held.get(credential_key(item["hash"]["S"])["PK"]["S"], {})
            used = by_hash.get("last_used_at", {}).get("S")
            revoked = by_hash.get("revoked_at", {}).get("S") or listed.revoked_at
            found.append(replace(listed, last_used_at=used, revoked_at=revoked))
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
