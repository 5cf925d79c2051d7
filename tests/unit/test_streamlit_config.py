"""The production config shows visitors no exception detail: no type, no message, no traceback (server paths)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Streamlit reads .streamlit/config.toml from the working directory; its own exception marshalling then decides
# what the browser receives for an uncaught error.
PROBE = """
import json
from streamlit import config
from streamlit.elements import exception
from streamlit.proto.Exception_pb2 import Exception as ExceptionProto
config.get_config_options(force_reparse=True)
proto = ExceptionProto()
try:
    raise RuntimeError("/srv/studio/secret_path.py: sk-live-0123456789abcdef")
except RuntimeError as exc:
    exception.marshall(proto, exc, apply_show_error_details=True)
print(json.dumps({"option": str(config.get_option("client.showErrorDetails")), "message": proto.message,
                  "type": proto.type, "trace": list(proto.stack_trace)}))
"""


def _uncaught_error_as_sent(cwd: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_config_hides_exception_details_from_visitors():
    sent = _uncaught_error_as_sent(ROOT)
    assert sent["option"] == "none"
    assert sent["type"] == "" and sent["trace"] == []
    assert "secret_path" not in sent["message"] and "sk-live" not in sent["message"]
    assert sent["message"]  # a generic one-line notice instead


def test_without_the_config_streamlit_would_show_them(tmp_path):
    sent = _uncaught_error_as_sent(tmp_path)
    assert sent["type"] == "RuntimeError" and "secret_path" in sent["message"] and sent["trace"]
