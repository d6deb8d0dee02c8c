"""The README's Python quick start runs as printed: it delivers once, and a second run stops on the consumed key."""
import os
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.environ.get("ONCEGATE_README") or os.path.join(HERE, "..", "..", "..", "README.md")
MARKER = "<!-- quickstart-python:"


def quickstart_block():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    assert MARKER in text, "the README lost its quickstart-python marker"
    after = text[text.index(MARKER):]
    start = after.index("```python\n") + len("```python\n")
    return after[start:after.index("```\n", start)]


def test_readmeQuickStart_deliversOnce_thenStops(sidecar, tmp_path):
    # Given: the README's block, and a report.pdf of our own (a fresh key)
    script = tmp_path / "send_report.py"
    script.write_text(quickstart_block(), encoding="utf-8")
    (tmp_path / "report.pdf").write_text("Q3 numbers %s\n" % uuid.uuid4(), encoding="utf-8")

    # When: it runs twice, as printed
    runs = [subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=sidecar.env(), capture_output=True,
                           text=True, timeout=120) for _ in range(2)]

    # Then: the first delivers, the second is told it was delivered already
    assert runs[0].returncode == 0, runs[0].stderr
    assert "delivered: msg-" in runs[0].stdout
    assert runs[1].returncode == 0, runs[1].stderr
    assert "not sent again: stop_sent" in runs[1].stdout
    assert runs[1].stdout.count("sending") == 0
