"""The newer formats end to end: real stores in tmp dirs, real runs through the real SDKs against
the loopback stub server, the offline chance model, the embedding cache and provider embeddings,
and the format statistics computed from stored details."""
from __future__ import annotations

import json

import pytest
from format_items import COLOURS, PIECES, RECORDS, RIGHT, fill, png, write_images
from stubs import StubServer

from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.providers.base import ProviderRequest, RequestImage
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.scoring.rescore import rescore, set_embedding_model
from eduart_core.scoring.responses import add_responses
from eduart_core.store.embeddings import embedding_cache_stats, embedding_model
from eduart_core.store.items import load_items
from eduart_core.store.runs import create_run, ensure_model
from eduart_core.store.scores import load_scores

BY_QUESTION = {r["question_text"]: r["item_id"] for r in RECORDS}


def _right_answer(info) -> str:
    item_id = next((i for q, i in BY_QUESTION.items() if q in info.user_text), None)
    return json.dumps({"Answers": RIGHT.get(item_id, [])})


def _scores(store, profile="strict", dataset="muse"):
    frame = load_scores(store, profile, dataset=dataset)
    return dict(zip(frame["item_id"], frame["score"]))


def test_items_and_option_images_are_stored_once_and_reimport_changes_nothing(store):
    fill(store)
    items = load_items(store, "muse").set_index("item_id")
    assert set(items.index) == {r["item_id"] for r in RECORDS}
    pieces = items.loc["p1", "option_images"]
    assert list(pieces) == ["A", "B", "C"] and len(set(pieces.values())) == 3
    assert items.loc["n1", "option_images"] == {} and not items["data_issue"].any()
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM images").fetchone()[0] == len(COLOURS)
    root = write_images(store.local_base.parent / "format_src")
    again = upsert_items(store, RECORDS, "muse", "test", images_root=root)
    assert again.added == [] and again.updated == [] and len(again.unchanged) == len(RECORDS)
    # a changed option image is a new version of the item
    (root / "imgs" / "piece_c.png").write_bytes(png((0, 0, 90)))
    changed = upsert_items(store, RECORDS, "muse", "test", images_root=root)
    assert changed.updated == ["p1"]
    # an edit without image files keeps the stored option images
    from eduart_core.scoring.item_writes import save_item_version

    version = save_item_version(store, "muse", {**PIECES, "question_text": "Which piece fills the hole?"}, "review", "x")
    assert version == 3 and load_items(store, "muse").set_index("item_id").loc["p1", "option_images"] == \
        load_items(store, "muse").set_index("item_id").loc["p1", "option_images"]
    assert set(load_items(store, "muse").set_index("item_id").loc["p1", "option_images"]) == {"A", "B", "C"}


def test_missing_option_image_is_a_named_problem(store, tmp_path):
    root = write_images(tmp_path / "src")
    (root / "imgs" / "piece_b.png").unlink()
    with pytest.raises(Exception, match=r"choices\[B\]\.image.*piece_b.png"):
        upsert_items(store, [PIECES], "muse", "test", images_root=root)


def test_run_every_new_format_through_the_openai_sdk(store):
    fill(store)
    with StubServer(answer=_right_answer) as stub:
        assert main(["run", "--db", str(store.path), "--dataset", "muse", "--provider", "openai_compatible",
                     "--base-url", f"{stub.url}/v1", "--model-id", "stub-model", "--quiet"]) == 0
        requests = {BY_QUESTION[q]: r for r in stub.requests for q in BY_QUESTION if q in r.user_text}
    assert _scores(store) == {r["item_id"]: 1.0 for r in RECORDS}
    assert _scores(store, "paper") == {r["item_id"]: 1.0 for r in RECORDS}
    scene = png(COLOURS["scene.png"], (200, 100))
    pieces = requests["p1"]
    assert [kind for kind, _ in pieces.parts] == ["text", "image", "text", "image", "text", "image", "text", "image"]
    assert [v for k, v in pieces.parts if k == "text"][1:] == ["Option A:", "Option B:", "Option C:"]
    assert [data for _, data in pieces.images] == [scene] + [png(COLOURS[f"piece_{c}.png"]) for c in "abc"]
    assert "(image C)" in pieces.user_text and "are images sent after this text" in pieces.user_text
    boxes = requests["b1"]
    assert [data for _, data in boxes.images] == [scene] and "box x 0.50, y 0.50, w 0.40, h 0.40" in boxes.user_text
    assert requests["n1"].images == [] and requests["n1"].schema["properties"]["Answers"]["items"]["required"] \
        == ["id", "text"]
    assert "A (lateral):" in requests["m1"].user_text
    with store.connect(read_only=True) as con:
        sent = dict(con.execute("SELECT item_id, image_sent FROM responses").fetchall())
    assert sent["p1"] and sent["b1"] and not sent["n1"]


@pytest.mark.parametrize("name", ["gemini", "bedrock"])
def test_gemini_and_bedrock_send_option_images_in_order_with_labels(name):
    from eduart_core.providers.bedrock import BedrockProvider
    from eduart_core.providers.gemini import GeminiProvider

    images = [RequestImage(f"Option {c}:", png(COLOURS[f"piece_{c.lower()}.png"]), "image/png") for c in "ABC"]
    with StubServer(answer=lambda info: '{"Answers": [{"id": "C"}]}') as stub:
        provider = (GeminiProvider("gemini-test", api_key="gem-test-key", base_url=stub.url, timeout_s=2.0)
                    if name == "gemini" else
                    BedrockProvider("stub.model-v1:0", endpoint_url=stub.url, timeout_s=2.0,
                                    credentials={"region_name": "us-east-1", "aws_access_key_id": "x",
                                                 "aws_secret_access_key": "y"}))
        reply = provider.complete(ProviderRequest("S", "QUESTION", image=png((9, 9, 9)), image_mime="image/png",
                                                  images=images))
        sent = stub.requests[-1]
    assert json.loads(reply.text)["Answers"] == [{"id": "C"}]
    texts = [v for k, v in sent.parts if k == "text"]
    assert texts == ["QUESTION", "Option A:", "Option B:", "Option C:"]
    assert [data for _, data in sent.images] == [png((9, 9, 9))] + [i.data for i in images]
    kinds = [k for k, _ in sent.parts]
    assert kinds.index("image") < kinds.index("text", 1)  # the item image comes before the first label


def test_text_only_sends_no_option_images(store):
    fill(store)
    with StubServer(answer=_right_answer) as stub:
        assert main(["run", "--db", str(store.path), "--dataset", "muse", "--provider", "openai_compatible",
                     "--base-url", f"{stub.url}/v1", "--model-id", "blind", "--text-only", "--quiet"]) == 0
        assert all(r.images == [] for r in stub.requests)


def test_chance_model_answers_every_format(store):
    fill(store)
    assert main(["run", "--db", str(store.path), "--dataset", "muse", "--model", "chance", "--quiet"]) == 0
    with store.connect(read_only=True) as con:
        rows = con.execute("SELECT item_id, parse_error, error FROM responses").fetchall()
    assert {r[0] for r in rows} == {r["item_id"] for r in RECORDS}
    assert all(r[1] is None and r[2] is None for r in rows)
    scores = _scores(store)
    assert set(scores) == {r["item_id"] for r in RECORDS} and all(0 <= s <= 1 for s in scores.values())


def _open_text_run(store, answers: dict[str, str]) -> None:
    ensure_model(store, "m1", "Model One", "Acme", "offline", "m1")
    create_run(store, "r1", "muse", "m1", "default", "live")
    add_responses(store, "r1", [{"item_id": i, "raw_text": t, "request_key": i} for i, t in answers.items()])


def test_open_text_embeddings_are_cached_in_the_store(store):
    fill(store)
    _open_text_run(store, {"o1": json.dumps({"Answers": [{"id": "A", "text": "The Madonna holds the baby."}]})})
    stats = embedding_cache_stats(store)
    assert stats.to_dict("records") == [{"model": "usem3", "n": 3, "dim": 512}]  # 2 references + 1 answer
    first = load_scores(store, dataset="muse")
    assert first.attrs["embedding_models"] == ["usem3"]
    row = first[first.item_id == "o1"].iloc[0]
    assert 0.5 < row.score <= 1 and row.scorer == "open_text/1+usem3"
    rescore(store)
    assert embedding_cache_stats(store)["n"].tolist() == [3]
    assert load_scores(store, dataset="muse").set_index("item_id").loc["o1", "score"] == pytest.approx(row.score)


def test_provider_embeddings_through_the_sdks_and_never_mixed(store, monkeypatch, capsys):
    fill(store)
    _open_text_run(store, {"o1": "La Madonna tiene il Bambino."})  # a free-form reply
    create_run(store, "r2", "muse", "m1", "motivation", "live")
    add_responses(store, "r2", [{"item_id": "o1", "raw_text": "La Madonna tiene il Bambino."}])
    with StubServer() as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-embeddings-000")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.url}/v1")
        assert main(["score", "--db", str(store.path), "--embedding-model", "openai:text-embedding-3-large"]) == 0
        assert "openai:text-embedding-3-large (was usem3)" in capsys.readouterr().out
        asked = [r for r in stub.requests if r.protocol == "openai_embeddings"]
        assert asked and asked[0].model == "text-embedding-3-large"
        texts = {t for r in asked for k, t in r.parts}
        assert texts == {"La Madonna tiene il Bambino.", *RECORDS[3]["answers"][0]["references"]}
        frame = load_scores(store, dataset="muse")
        assert frame.attrs["embedding_models"] == ["openai:text-embedding-3-large"]
        open_row = frame[frame.item_id == "o1"].iloc[0]
        assert open_row.scorer == "open_text/1+openai:text-embedding-3-large"
        n_before = len(stub.requests)
        rescore(store)  # every vector is cached now: nothing is asked again
        assert len(stub.requests) == n_before
        monkeypatch.setenv("GEMINI_API_KEY", "gem-test-key-000000")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", stub.url)
        set_embedding_model(store, "gemini:gemini-embedding-001")
        gemini = [r for r in stub.requests if r.protocol == "gemini_embeddings"]
        assert gemini and gemini[0].path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert embedding_model(store) == "gemini:gemini-embedding-001"
    assert set(embedding_cache_stats(store)["model"]) == {"usem3", "openai:text-embedding-3-large",
                                                          "gemini:gemini-embedding-001"}
    with store.transaction() as con:  # a score of another model sneaking in is refused, not averaged
        con.execute("UPDATE scores SET scorer = 'open_text/1+usem3' WHERE response_id = "
                    "(SELECT min(response_id) FROM scores WHERE profile = 'strict' AND scorer LIKE 'open_text%')")
    with pytest.raises(UserError, match="2 embedding models"):
        load_scores(store, "strict", dataset="muse")


@pytest.mark.postgres
def test_no_write_transaction_waits_on_an_embedding_request(pg_url, monkeypatch):
    """A provider's embedding request (seconds on a slow network) is made with no transaction of ours
    open, so the reviewers and runs writing beside it never wait for it: while the provider is asked,
    PostgreSQL shows no session of ours idle inside a transaction."""
    import psycopg

    from eduart_core.store import Store

    store = Store(pg_url)
    fill(store)
    _open_text_run(store, {"o1": "La Madonna tiene il Bambino."})
    waiting: list[int] = []

    def look(info):  # the stub's hook, run while the request is in flight
        with psycopg.connect(pg_url, autocommit=True) as probe:
            waiting.append(probe.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()").fetchone()[0])

    with StubServer() as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-embeddings-000")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.url}/v1")
        stub.fault_for = look
        set_embedding_model(store, "openai:text-embedding-3-large")  # rescoring every open-text answer
        create_run(store, "r2", "muse", "m1", "motivation", "live")
        add_responses(store, "r2", [{"item_id": "o1", "raw_text": "Il Bambino in braccio alla Madonna."}])
    assert len(waiting) == 2 and waiting == [0, 0]
    assert load_scores(store, dataset="muse").attrs["embedding_models"] == ["openai:text-embedding-3-large"]


def test_missing_embedding_key_changes_nothing(store):
    fill(store)
    _open_text_run(store, {"o1": "The Virgin holds the Child."})
    before = load_scores(store, dataset="muse")
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        set_embedding_model(store, "openai:text-embedding-3-large")
    with pytest.raises(UserError, match="unknown embedding model"):
        set_embedding_model(store, "word2vec")
    assert embedding_model(store) == "usem3"
    assert load_scores(store, dataset="muse").equals(before)


def test_numeric_errors_and_part_accuracy_from_stored_details(store):
    from eduart_core.analysis import numeric_errors, part_accuracy

    fill(store)
    ensure_model(store, "m1", "Model One", "Acme", "offline", "m1")
    create_run(store, "r1", "muse", "m1", "default", "live")

    def reply(*entries):
        return json.dumps({"Answers": list(entries)})

    add_responses(store, "r1", [
        {"item_id": "n1", "raw_text": reply({"id": "A", "text": "eight"})},         # off by one
        {"item_id": "n2", "raw_text": reply({"id": "A", "text": "about 12"})},      # right
        {"item_id": "m1", "raw_text": reply({"id": "A", "text": "left"}, {"id": "B", "text": "in front"},
                                            {"id": "C", "text": "none"})},
    ])
    create_run(store, "r2", "muse", "m1", "motivation", "live")
    add_responses(store, "r2", [{"item_id": "n1", "raw_text": "six or seven"},    # unparseable
                                {"item_id": "n2", "raw_text": reply({"id": "A", "text": "20"})}])
    frame = load_scores(store, dataset="muse", include_details=True)
    errors = numeric_errors(frame).set_index("condition")
    assert errors.loc["default", ["n", "n_parsed", "accuracy", "mae", "off_by_one_rate"]].tolist() == [2, 2, 0.5, 0.5, 0.5]
    assert errors.loc["motivation", ["n", "n_parsed", "accuracy", "mae"]].tolist() == [2, 1, 0.0, 8.0]
    labels = {"m1": {c["id"]: c["label"] for c in RECORDS[2]["choices"]}}
    parts = part_accuracy(frame, labels).set_index("part")
    assert parts["accuracy"].to_dict() == {"depth": 0.0, "lateral": 1.0, "vertical": 1.0}
    assert (parts["n"] == 1).all() and parts.loc["lateral", "ci_low"] < 1.0


def test_chance_levels_by_format(store):
    from eduart_core.analysis import chance_levels

    fill(store)
    table = chance_levels(load_items(store, "muse")).set_index("type")
    assert table.loc["multi_part_choice", "chance"] == pytest.approx(1 / 27)
    assert table.loc["numeric", "n_items"] == 2 and table.loc["numeric", "chance"] == pytest.approx((1 + 3) / 21 / 2)
    assert table.loc["open_text", "n_defined"] == 0


def test_import_items_cli_reads_new_formats_with_option_images(tmp_path):
    from eduart_core.store import Store
    from eduart_core.store.scores import stats

    root = write_images(tmp_path / "bench")
    (root / "items.jsonl").write_text("\n".join(json.dumps(r) for r in RECORDS), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    assert main(["import-items", str(root / "items.jsonl"), "--dataset", "muse", "--db", str(db)]) == 0
    counts = stats(Store(db))
    assert counts["items"] == len(RECORDS) and counts["images"] == len(COLOURS)
    assert counts["items_by_type"] == {"multi_part_choice": 1, "multiple_choice_radio": 2, "numeric": 2,
                                       "open_text": 1}
    assert counts["items_with_data_issue"] == 0


def test_format_views_on_a_store_with_new_formats(store):
    from eduart_core import views
    from eduart_core.selection import Selection

    fill(store)
    with StubServer(answer=_right_answer) as stub:
        assert main(["run", "--db", str(store.path), "--dataset", "muse", "--provider", "openai_compatible",
                     "--base-url", f"{stub.url}/v1", "--model-id", "stub-model", "--quiet"]) == 0
    src, sel = views.Source.of(store), Selection(dataset="muse")
    key = views.run_view("answer_key", src, sel, item="m1")
    assert key[["element", "label", "gold"]].values.tolist() == [["A", "lateral", "left"], ["B", "depth", "behind"],
                                                                 ["C", "vertical", "none"]]
    chance = views.run_view("chance_levels", src, Selection(dataset="muse", types=("numeric",)))
    assert chance["type"].tolist() == ["numeric"] and chance["n_items"].tolist() == [2]
    errors = views.numeric_errors(src, sel)
    assert errors[["n", "n_parsed", "accuracy", "mae"]].values.tolist() == [[2, 2, 1.0, 0.5]]  # "undici" vs 12
    parts = views.part_accuracy(src, sel)
    assert parts["part"].tolist() == ["depth", "lateral", "vertical"] and (parts["accuracy"] == 1.0).all()
