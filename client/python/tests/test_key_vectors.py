"""The Python key derivation reproduces every vector of shared/key-vectors.json, byte for byte."""
import json
import os

import pytest

import oncegate

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.environ.get("ONCEGATE_KEY_VECTORS") or os.path.join(
    HERE, "..", "..", "src", "test", "resources", "key-vectors.json")


def _vectors():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)["vectors"]


def _content(v):
    if v["content_hex"] is not None:
        return bytes.fromhex(v["content_hex"])
    assert v["content_desc"] == "the byte 0x61 ('a') repeated 100000 times"
    return b"a" * 100000


@pytest.mark.parametrize("v", _vectors(), ids=lambda v: v["key"][:12])
def test_everyVector_reproducesCanonicalTextAndKey(v):
    key = oncegate.effect_key(provider=v["provider"], identity=v["identity"], destination=v["destination"],
                              content=_content(v))
    assert key.sha256 == v["content_sha256"]
    assert key.canonical_text() == v["canonical"]
    assert key.key == v["key"]


def test_destinationForms_giveTheSameKeyAsProviderAndIdentity(tmp_path):
    content = tmp_path / "report.pdf"
    content.write_bytes(b"hello world\n")
    by_file = oncegate.effect_key(destination="slack:C024BE91L", file=str(content))
    by_name = oncegate.effect_key(destination_name="slack:#general", content=b"hello world\n")
    assert by_file.key == "db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526"
    assert by_name.key == "82c9cbf014626a5e4a03ca3ab2e14a52bd7423eca8b0569f51d2adab0d3ba029"


@pytest.mark.parametrize("kwargs, field", [
    ({"destination": "slack:", "content": b"x"}, "destination"),
    ({"destination": "Slack:C1", "content": b"x"}, "provider"),
    ({"destination": "slack:\ud800", "content": b"x"}, "destination"),
    ({"destination": "slack:C1", "sha256": "ABC"}, "sha256"),
    ({"destination": "slack:C1", "file": "/does/not/exist"}, "file"),
    ({"destination": "slack:C1"}, "content"),
])
def test_badInput_isRefusedNamingTheField(kwargs, field):
    with pytest.raises(ValueError) as refused:
        oncegate.effect_key(**kwargs)
    assert str(refused.value).startswith(field + ":")
