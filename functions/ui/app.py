"""GET /, GET and HEAD /ui, /ui/ and /ui/{proxy+}: the memory explorer's static page and files
(taisce/ui/static). No authorizer: the page holds no data, and every data call it makes
goes to the API with the credential the person pastes in."""

from typing import Any

from taisce.ui.serving import respond


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    return respond(event)
