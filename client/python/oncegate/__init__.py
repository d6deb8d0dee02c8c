"""oncegate for Python: make an external side effect happen at most once across a fleet of agents.

The client of ``oncegate sidecar`` (JSON over HTTP on loopback), standard library only: install it with
``pip install ./client/python`` or copy this one file as ``oncegate.py``.

    import oncegate

    gate = oncegate.Gate()   # $ONCEGATE_SIDECAR_URL and $ONCEGATE_SIDECAR_TOKEN_FILE, or the sidecar's defaults
    with gate.effect(destination="mail:ops@example.com", file="report.pdf", task=task_id) as effect:
        if effect.decision.proceed:
            effect.checkpoint("attachment-picker")
            with effect.crossing() as crossing:          # arms; the body is the boundary
                receipt = send(..., idempotency_key=crossing.idempotency_key)
                crossing.sent_verified(evidence=receipt)   # or crossing.not_sent(evidence=...)

Rules the API keeps for you:

* ``effect.decision.proceed`` is true for one agent per effect at a time; the others get a stop with its reason
  and evidence (``stop_sent``, ``stop_unknown``, ``stop_busy``, ``stop_unavailable``).
* ``effect.crossing()`` arms the scope: act only inside its body. An exception inside it, or leaving it without
  an outcome, records ``send_status_unknown`` (which consumes the key), never ``not_sent``. ``not_sent`` needs
  proof that nothing was delivered (``evidence``). Evidence longer than the sidecar keeps (``MAX_EVIDENCE``, 2,048
  UTF-16 code units) is cut to fit, with a note of how much was cut, so a long receipt never turns a verified
  delivery into ``send_status_unknown``.
* A checkpoint or crossing that is refused raises :class:`Stopped`; anything that cannot reach the sidecar raises
  :class:`Unavailable`. Both mean: do not act.
* Leaving the ``with gate.effect(...)`` block without crossing releases the lease at once.
* ``gate.effect(..., cross=True)`` is for an agent with no checkpoint: it enters and, when the decision is
  proceed, arms in the same call (one round trip fewer); ``effect.crossing()`` then returns the armed crossing
  without another call. The effect is armed from the start: no checkpoint, no release, and leaving the ``with``
  block without reporting records ``send_status_unknown``.

The effect key is derived here exactly as in Java (``effect_key``), byte for byte (``shared/key-vectors.json``).

Thread-safety: a :class:`Gate` may be shared by threads (one HTTP connection per thread); an :class:`Effect` and
its :class:`Crossing` belong to the thread that opened them.
"""

import hashlib
import http.client
import json
import os
import re
import select
import threading
import time
import urllib.parse

__all__ = ["Gate", "Effect", "Crossing", "Decision", "EffectKey", "effect_key", "OncegateError", "Stopped",
           "Unavailable", "SidecarError", "DEFAULT_URL", "MAX_EVIDENCE"]

DEFAULT_URL = "http://127.0.0.1:7460"
# A kept-alive connection idle this long is not reused: the sidecar's HTTP server closes idle ones (after 30 s by
# default), and a request written to a closed one fails without reaching it, which inside a crossing would turn a
# delivery the agent verified into send_status_unknown. A new connection costs a loopback handshake.
IDLE_RECONNECT_SECONDS = 10.0
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_MAX_ID_BYTES = 1024
# The most evidence the sidecar keeps, in UTF-16 code units as Java counts them (a character outside the BMP is
# two). An outcome's evidence is cut to fit, with a note of how much was cut: refused, a verified delivery would be
# recorded send_status_unknown instead.
MAX_EVIDENCE = 2048
_CHUNK = 1 << 20


# ---- errors ------------------------------------------------------------------------------------

class OncegateError(Exception):
    """Root of this client's errors."""


class Unavailable(OncegateError):
    """The sidecar could not be reached or answered 503: fail closed, do not act."""


class SidecarError(OncegateError):
    """The sidecar refused a call (nothing changed); ``field`` names the request field at fault."""

    def __init__(self, status, message, field=None):
        super().__init__("%s (HTTP %d%s)" % (message, status, ", field " + field if field else ""))
        self.status = status
        self.field = field


class Stopped(OncegateError):
    """The gate said stop at a checkpoint or when crossing: do not act. ``decision`` says why."""

    def __init__(self, decision):
        super().__init__("stopped: %s (%s)%s" % (decision.kind, decision.reason,
                                                ": " + decision.evidence.get("detail", "") if decision.evidence else ""))
        self.decision = decision


# ---- effect keys -------------------------------------------------------------------------------

class EffectKey(object):
    """An effect's identity: destination and content. Immutable."""

    __slots__ = ("key", "provider", "identity", "destination", "sha256")

    def __init__(self, key, provider, identity, destination, sha256):
        self.key, self.provider, self.identity, self.destination, self.sha256 = \
            key, provider, identity, destination, sha256

    def canonical_text(self):
        return _canonical(self.provider, self.identity, self.destination, self.sha256)

    def __repr__(self):
        return "EffectKey(%s, %s %s:%s)" % (self.key, self.identity, self.provider, self.destination)


def _pct(text, field):
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("%s: contains an unpaired surrogate, which has no UTF-8 form" % field)
    return "".join(chr(b) if b in _UNRESERVED else "%%%02X" % b for b in raw)


def _canonical(provider, identity, destination, sha256):
    return ("oncegate-key/v1\nprovider:" + _pct(provider, "provider") + "\nidentity:" + identity
            + "\ndestination:" + _pct(destination, "destination") + "\nsha256:" + sha256 + "\n")


def _split(text, field):
    if not isinstance(text, str) or ":" not in text:
        raise ValueError("%s: expected PROVIDER:ID (e.g. mail:ops@example.com), got %r" % (field, text))
    provider, ident = text.split(":", 1)
    return provider, ident


def _sha256_file(path):
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                digest.update(chunk)
    except OSError as e:
        raise ValueError("file: could not read %r: %s" % (str(path), e))
    return digest.hexdigest()


def effect_key(destination=None, destination_name=None, file=None, content=None, sha256=None,
               provider=None, identity=None):
    """The effect key, exactly as the Java library derives it.

    The destination is ``destination="PROVIDER:ID"`` (a provider-assigned id, preferred) or
    ``destination_name="PROVIDER:TITLE"`` (an exact visible title, a weaker identity), or ``provider`` with
    ``identity`` (``"stable"`` or ``"display-name"``) and ``destination``. The content is one of ``file`` (a path,
    hashed streaming), ``content`` (bytes) or ``sha256`` (64 lower-case hex). Identifiers are taken exactly as
    given: no trimming, no case folding, no normalisation. Raises ValueError naming the field.
    """
    if provider is not None:
        if identity not in ("stable", "display-name"):
            raise ValueError("identity: must be 'stable' or 'display-name', got %r" % (identity,))
        ident = destination
    else:
        if (destination is None) == (destination_name is None):
            raise ValueError("destination: give exactly one of destination (PROVIDER:ID) or destination_name"
                             " (PROVIDER:TITLE)")
        identity = "stable" if destination is not None else "display-name"
        provider, ident = _split(destination if destination is not None else destination_name,
                                 "destination" if destination is not None else "destination_name")
    if not isinstance(provider, str) or not _PROVIDER.match(provider):
        raise ValueError("provider: %r must match [a-z0-9][a-z0-9._-]{0,63}" % (provider,))
    if not isinstance(ident, str) or not ident:
        raise ValueError("destination: the identifier must not be empty")
    _pct(ident, "destination")  # refuses an unpaired surrogate, naming the field
    size = len(ident.encode("utf-8"))
    if size > _MAX_ID_BYTES:
        raise ValueError("destination: the identifier is %d UTF-8 bytes; at most %d are allowed" % (size, _MAX_ID_BYTES))
    given = [name for name, value in (("file", file), ("content", content), ("sha256", sha256)) if value is not None]
    if len(given) != 1:
        raise ValueError("content: give exactly one of file, content or sha256%s" % (
            " (got %s)" % ", ".join(given) if given else ""))
    if file is not None:
        sha256 = _sha256_file(file)
    elif content is not None:
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise ValueError("content: must be bytes (encode text yourself: the key is of the exact bytes delivered)")
        sha256 = hashlib.sha256(content).hexdigest()
    elif not (isinstance(sha256, str) and re.match(r"[0-9a-f]{64}\Z", sha256)):
        raise ValueError("sha256: expected 64 lower-case hex characters, got %r" % (sha256,))
    key = hashlib.sha256(_canonical(provider, identity, ident, sha256).encode("utf-8")).hexdigest()
    return EffectKey(key, provider, identity, ident, sha256)


# ---- decisions ---------------------------------------------------------------------------------

class Decision(object):
    """What the gate decided: ``kind`` is proceed, stop_sent, stop_unknown, stop_busy or stop_unavailable."""

    __slots__ = ("kind", "reason", "scope", "token", "zxid", "evidence")

    def __init__(self, answer):
        self.kind = answer["decision"]
        self.reason = answer.get("reason")
        self.scope = answer.get("scope")
        self.token = answer.get("token")
        self.zxid = answer.get("zxid")
        self.evidence = answer.get("evidence")

    @property
    def proceed(self):
        return self.kind == "proceed"

    def __repr__(self):
        return "Decision(%s, reason=%s, scope=%s)" % (self.kind, self.reason, self.scope)


# ---- the gate ----------------------------------------------------------------------------------

def _default_token_file():
    state = os.environ.get("ONCEGATE_STATE_DIR")
    if not state:
        xdg = os.environ.get("XDG_STATE_HOME")
        base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".local", "state")
        state = os.path.join(base, "oncegate")
    return os.path.join(state, "sidecar.token")


class Gate(object):
    """A connection to the local ``oncegate sidecar``.

    ``url`` defaults to ``$ONCEGATE_SIDECAR_URL``, else ``http://127.0.0.1:7460``; the bearer token is read from
    ``token`` or ``token_file`` (default ``$ONCEGATE_SIDECAR_TOKEN_FILE``, else ``sidecar.token`` in the state
    directory, as the sidecar writes it). ``timeout`` bounds each call's socket wait, in seconds (an enter that
    waits for another executor is given its wait on top).
    """

    def __init__(self, url=None, token=None, token_file=None, timeout=60.0, ssl_context=None):
        self.url = (url or os.environ.get("ONCEGATE_SIDECAR_URL") or DEFAULT_URL).rstrip("/")
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("url: expected http://HOST:PORT or https://HOST:PORT, got %r" % self.url)
        self._parts = parts
        self._token = token
        self._token_file = token_file or os.environ.get("ONCEGATE_SIDECAR_TOKEN_FILE") or _default_token_file()
        self.timeout = timeout
        self._ssl = ssl_context
        self._local = threading.local()

    # -- the API

    def effect(self, destination=None, destination_name=None, file=None, content=None, sha256=None, task=None,
               wait=0, key=None, cross=False):
        """Enters the effect (see ``effect_key`` for the arguments); use it as a context manager.

        ``wait`` (seconds) is how long to wait for another active executor's final decision. ``cross=True`` arms
        in the same call when the decision is proceed (``/v1/enter-and-cross``): only for an agent that has no
        checkpoint and acts at once.
        """
        if key is None or destination is not None or destination_name is not None:
            key = effect_key(destination=destination, destination_name=destination_name, file=file, content=content,
                             sha256=sha256)
        return Effect(self, key, task, wait, cross)

    def inspect(self, key):
        """Everything recorded about a key (an EffectKey or its 64-hex text), as ``oncegate inspect`` prints it."""
        return self.call("inspect", {"key": key.key if isinstance(key, EffectKey) else key})

    def health(self):
        """The sidecar's /healthz answer (raises Unavailable when it is not healthy)."""
        return self._request("GET", "/healthz", None, self.timeout)

    # -- HTTP

    def call(self, endpoint, body, extra_timeout=0.0):
        """POSTs ``body`` to ``/v1/<endpoint>``; returns the answer, raises SidecarError or Unavailable."""
        return self._request("POST", "/v1/" + endpoint, body, self.timeout + extra_timeout)

    def _bearer(self, reread=False):
        if self._token is not None:
            return self._token
        if reread or getattr(self, "_cached", None) is None:
            try:
                with open(self._token_file, "r", encoding="utf-8") as f:
                    self._cached = f.read().strip()
            except OSError as e:
                raise Unavailable("cannot read the sidecar's token file %s (%s): is the sidecar running, and is its"
                                  " --token-file shared with this agent?" % (self._token_file, e))
        return self._cached

    def _connection(self, timeout):
        conn = getattr(self._local, "conn", None)
        if conn is not None and (time.monotonic() - getattr(self._local, "used", 0.0) > IDLE_RECONNECT_SECONDS
                                 or _closed_by_peer(conn)):
            conn.close()
            conn = self._local.conn = None
        if conn is None:
            port = self._parts.port or (443 if self._parts.scheme == "https" else 80)
            if self._parts.scheme == "https":
                conn = http.client.HTTPSConnection(self._parts.hostname, port, timeout=timeout, context=self._ssl)
            else:
                conn = http.client.HTTPConnection(self._parts.hostname, port, timeout=timeout)
            self._local.conn = conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn

    def _request(self, method, path, body, timeout):
        data = None if body is None else json.dumps(body).encode("utf-8")
        for attempt in (1, 2):
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            if path.startswith("/v1/"):
                headers["Authorization"] = "Bearer " + self._bearer(reread=attempt == 2)
            conn = self._connection(timeout)
            try:
                conn.request(method, path, body=data, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                self._local.used = time.monotonic()
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                self._local.conn = None
                # Never resent: a call whose answer was lost may have taken effect (a cross may have armed).
                raise Unavailable("the sidecar at %s did not answer %s %s: %s; do not act" % (self.url, method, path, e))
            if response.getheader("Connection", "").lower() == "close":
                conn.close()
                self._local.conn = None
            if response.status == 401 and attempt == 1 and self._token is None:
                continue  # a restarted sidecar writes a new token: read it once more (nothing changed on a 401)
            try:
                answer = json.loads(raw.decode("utf-8")) if raw else {}
            except ValueError:
                raise Unavailable("the sidecar answered %s %s with HTTP %d and no JSON" % (method, path, response.status))
            if response.status == 503:
                raise Unavailable("%s (HTTP 503)" % answer.get("error", answer.get("status", "unavailable")))
            if response.status >= 400:
                raise SidecarError(response.status, answer.get("error", "refused"), answer.get("field"))
            return answer
        raise AssertionError("unreachable")


def _closed_by_peer(conn):
    """Whether the sidecar closed this kept connection since its last answer. An idle connection has nothing to
    read, so anything readable is its end: the JDK's server closes one silently when its idle connections are
    already as many as it keeps (200), and a request written to it would fail without reaching the sidecar."""
    if conn.sock is None:
        return False
    try:
        return bool(select.select([conn.sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class Effect(object):
    """One agent's attempt at one effect, from enter to the end of its ``with`` block."""

    def __init__(self, gate, key, task, wait, cross=False):
        self.gate = gate
        self.key = key
        self.task = task
        self.wait = wait
        self.decision = None
        self.handle = None
        self._crossed = False
        self._cross_at_enter = cross
        self._armed = None  # the armed answer of enter-and-cross, until crossing() takes it

    def __enter__(self):
        body = {"destination" if self.key.identity == "stable" else "destination_name":
                self.key.provider + ":" + self.key.destination, "sha256": self.key.sha256, "key": self.key.key}
        if self.task is not None:
            body["task"] = self.task
        if self.wait:
            body["wait_ms"] = int(self.wait * 1000)
        answer = self.gate.call("enter-and-cross" if self._cross_at_enter else "enter", body,
                                extra_timeout=self.wait or 0)
        self.decision = Decision(answer)
        self.handle = answer.get("handle")
        if self._cross_at_enter and answer.get("armed"):
            self._armed = answer
        return self

    def _ids(self):
        return {"handle": self.handle, "token": self.decision.token}

    def checkpoint(self, name):
        """Revalidates the lease before a step near the boundary (opening a picker); raises Stopped on a stop."""
        self._require_not_armed("checkpoint")
        self._require_proceeding("checkpoint")
        answer = self.gate.call("checkpoint", dict(self._ids(), name=name))
        decision = Decision(answer)
        if not decision.proceed:
            self.decision = decision
            self.handle = None
            raise Stopped(decision)
        self.decision = decision
        return decision

    def crossing(self):
        """Arms the scope; the ``with`` body is the boundary. Raises Stopped when arming is refused."""
        self._require_proceeding("crossing")
        self._crossed = True
        armed, self._armed = self._armed, None
        return Crossing(self, armed)

    def release(self):
        """Gives the lease back before crossing (leaving the ``with`` block does it too)."""
        self._require_not_armed("release")
        if self.handle is not None and not self._crossed:
            handle, self.handle = self.handle, None
            self.gate.call("release", {"handle": handle, "token": self.decision.token})

    def _require_not_armed(self, what):
        if self._armed is not None:
            raise OncegateError("%s: this effect was entered with cross=True and is armed; act inside"
                                " effect.crossing() and report the outcome" % what)

    def _require_proceeding(self, what):
        if self.decision is None or not self.decision.proceed or self.handle is None:
            raise Stopped(self.decision) if self.decision is not None and not self.decision.proceed else \
                OncegateError("%s: this effect does not hold the lease" % what)
        if self._crossed:
            raise OncegateError("%s: this effect already crossed; a scope is crossed once" % what)

    def __exit__(self, exc_type, exc, tb):
        if self._armed is not None:
            # Armed at enter and never taken into a crossing: armed means consumed, so say unknown at once.
            self.crossing().__enter__().__exit__(exc_type, exc, tb)
            return False
        if self.handle is not None and not self._crossed:
            try:
                self.release()
            except OncegateError:
                if exc_type is None:
                    raise
                # the lease lapses by itself (the sidecar's idle timeout, the lease TTL)
        return False


class Crossing(object):
    """The armed boundary: act inside the ``with`` body, then report once.

    ``idempotency_key`` goes to the provider with every request of this crossing; ``token`` and ``zxid`` are the
    fencing token, for a provider that refuses stale executors.
    """

    def __init__(self, effect, armed=None):
        self._effect = effect
        self._answer = armed
        self.armed = False
        self.result = None
        self.scope = self.token = self.zxid = self.idempotency_key = None

    def __enter__(self):
        e = self._effect
        answer = self._answer if self._answer is not None else e.gate.call("cross", e._ids())
        if not answer.get("armed"):
            e.decision = Decision(answer)
            e.handle = None
            raise Stopped(e.decision)
        self.armed = True
        self.scope = answer["scope"]
        self.token = answer["token"]
        self.zxid = answer["zxid"]
        self.idempotency_key = answer["idempotency_key"]
        return self

    def sent_verified(self, evidence=None):
        """Delivery confirmed; ``evidence`` is the provider's receipt (a message id)."""
        return self._report("sent_verified", evidence)

    def not_sent(self, evidence):
        """Proven not delivered (the provider refused before accepting anything): the key is free again."""
        if not evidence:
            raise ValueError("evidence: not_sent needs proof that nothing was delivered; otherwise it is unknown")
        return self._report("not_sent", evidence)

    def unknown(self, evidence=None):
        """It may have been delivered: the key is consumed (send_status_unknown)."""
        return self._report("send_status_unknown", evidence)

    def _report(self, outcome, evidence):
        if not self.armed:
            raise OncegateError("outcome: this crossing is not armed")
        if self.result is not None:
            raise OncegateError("outcome: already reported (%s); an outcome is recorded once" % self.result["outcome"])
        body = dict(self._effect._ids(), outcome=outcome)
        if evidence is not None:
            body["evidence"] = _fit(str(evidence))
        self.result = self._effect.gate.call("outcome", body)
        return self.result

    def __exit__(self, exc_type, exc, tb):
        if self.armed and self.result is None:
            why = ("the agent's code raised %s: %s" % (exc_type.__name__, exc)) if exc_type is not None \
                else "the crossing ended without an outcome"
            try:
                self._report("send_status_unknown", why)
            except OncegateError:
                if exc_type is None:
                    raise
                # armed without an outcome already reads send_status_unknown to everyone
        return False


def _units(text):
    """``text``'s length as Java counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _fit(text):
    """``text``, or its head and a note of how much was cut, within MAX_EVIDENCE UTF-16 code units."""
    total = _units(text)
    if total <= MAX_EVIDENCE:
        return text
    note = " ... (%d of %d characters cut: the sidecar keeps %d)"
    room = MAX_EVIDENCE - _units(note % (total, total, MAX_EVIDENCE))  # the cut count has at most total's digits
    head, used = [], 0
    for ch in text:
        width = 2 if ord(ch) > 0xFFFF else 1
        if used + width > room:
            break
        head.append(ch)
        used += width
    return "".join(head) + note % (total - used, total, MAX_EVIDENCE)
