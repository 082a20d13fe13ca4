"""POST /v1/erasures: erase everything held about one entity."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import make_handler, make_resolver, project_of, services
from taisce.api.responses import Erased, described
from taisce.domain.erasure import ErasureRequest

app = make_resolver()


@app.post(
    "/v1/erasures",
    summary="Erase everything held about one entity",
    responses=described(200, Erased, "Erased (zero counts when nothing was held)"),
)
def erase(request: Annotated[ErasureRequest, Body(embed=False)]) -> dict[str, Any]:
    counts = services().memory.erase(project_of(app), request.subject)
    return {"erased": counts}


lambda_handler = make_handler(app)
