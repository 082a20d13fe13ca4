from tests.server import LocalServer


def test_health_needs_no_credential(server: LocalServer) -> None:
    with server.client() as http:
        r = http.get("/v1/health")
    assert r.status_code == 200
    assert r.json()["status"] == "ok"


def test_recall_through_the_server(server: LocalServer) -> None:
    with server.client(server.new_credential("smoke")) as http:
        stored = http.post(
            "/v1/facts",
            json={
                "facts": [
                    {
                        "subject": "Atlas",
                        "predicate": "works at",
                        "object": "Acme Corp",
                        "source_role": "user",
                    }
                ]
            },
        )
        assert stored.status_code == 201
        r = http.post("/v1/recalls", json={"question": "Where does atlas work?"})
    assert r.status_code == 200
    body = r.json()
    assert [f["statement"] for f in body["facts"]] == ["Atlas works at Acme Corp"]
    assert body["characters"] == len("Atlasworks atAcme CorpAtlas works at Acme Corpuser")
