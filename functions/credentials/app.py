"""POST /v1/credentials: mint a project or user credential; GET /v1/credentials: list
them; DELETE /v1/credentials/{id}: revoke one. An admin credential's routes only: any
other kind is answered 403. Every call acts in the caller's own project."""

from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from taisce.api import bodies, make_handler, make_resolver, services
from taisce.api.resolver import caller_of
from taisce.api.responses import CredentialList, MintedCredential, described
from taisce.domain.credential_requests import CredentialRequest
from taisce.domain.errors import Forbidden
from taisce.domain.listing import MAX_CURSOR_CHARACTERS, MAX_PAGE
from taisce.service import credential_admin

app = make_resolver()


def admin_project(resolver: APIGatewayHttpResolver) -> str:
    """The caller's project, if the caller is an admin credential."""
    caller = caller_of(resolver)
    if caller.kind != "admin":
        raise Forbidden("only an admin credential may mint, list or revoke credentials")
    return caller.project


@app.post(
    "/v1/credentials",
    summary="Mint a project credential, or a user credential bound to one user",
    responses=described(201, MintedCredential, "Minted: the secret is shown this once"),
)
def mint(request: Annotated[CredentialRequest, Body(embed=False)]) -> tuple[dict[str, Any], int]:
    project = admin_project(app)
    made, secret = credential_admin.mint_credential(services().credentials, project, request)
    return bodies.minted_credential(made, secret), 201


@app.get(
    "/v1/credentials",
    summary="The project's credentials, by id, a page at a time (never their secrets)",
    responses=described(200, CredentialList, "A page of credentials (next_cursor: the next)"),
)
def list_credentials(
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_CHARACTERS)] = None,
) -> dict[str, Any]:
    page = credential_admin.list_credentials(
        services().credentials, admin_project(app), limit, cursor
    )
    return bodies.credential_list(page)


@app.delete(
    "/v1/credentials/<credential_id>",
    summary="Revoke one credential of the project",
    responses=described(204, None, "Revoked", not_found=True),
)
def revoke(credential_id: str) -> Response[str]:
    # The route matches the raw path, so an id sent percent-encoded is decoded here.
    project = admin_project(app)
    credential_admin.revoke(services().credentials, project, unquote(credential_id))
    return Response(204, "application/json", "")


lambda_handler = make_handler(app)
