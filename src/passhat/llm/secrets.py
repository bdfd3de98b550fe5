"""API keys: read from the providers' usual environment variables, and kept out of everything written.

Keys never enter a run's configuration (only the variable's name is implied by the provider), and
base URLs that carry credentials are refused. Every key this process reads is registered with
``passhat.untrusted``, which redacts it from everything stored (trials, reports, the response cache);
``scrub`` removes it from text such as an endpoint's error message. litellm reads the credentials of the
provider it routes to itself, from variables passhat cannot list (AWS_SECRET_ACCESS_KEY, GEMINI_API_KEY…),
so for a litellm model every variable whose name says it holds a credential is registered instead.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from passhat.errors import UserError
from passhat.untrusted import add_secret, redact

KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
NO_KEY = "no-key"  # what a local server without authentication is sent (the SDKs insist on some key)
# GEMINI_API_KEY, AWS_SECRET_ACCESS_KEY, AWS_ACCESS_KEY_ID, AWS_SESSION_TOKEN, VERTEXAI_CREDENTIALS…
CREDENTIAL_NAME = re.compile(r"(^|_)(KEY|APIKEY|KEY_ID|SECRET|TOKEN|PASSWORD|CREDENTIALS)$", re.I)


def api_key(provider: str, base_url: str | None, flag: str) -> str:
    """The provider's key from its variable. Required for the provider's own endpoint; a custom
    ``base_url`` (a local server) may need none. A litellm model has no one variable: "" lets litellm read
    its provider's own."""
    if provider not in KEY_VARIABLES:
        register_credential_variables()
        return ""
    variable = KEY_VARIABLES[provider]
    key = os.environ.get(variable, "").strip()
    if not key and base_url is None:
        raise UserError(
            f"{flag} names an {provider} model but {variable} is not set: export {variable}=<your key> "
            f"(keys are read from the environment only, never from flags or config files)."
        )
    add_secret(key)
    return key or NO_KEY


def register_credential_variables() -> None:
    """Redact the value of every environment variable named like a credential (…_API_KEY, …_SECRET, …_TOKEN)."""
    for name, value in os.environ.items():
        if CREDENTIAL_NAME.search(name):
            add_secret(value.strip())


def check_base_url(url: str | None, flag: str) -> None:
    """A base URL is stored with the run, so it must not carry a credential."""
    if url is None:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"{url!r} in {flag} is not an http(s) URL; write e.g. http://localhost:8000/v1.")
    if parts.username or parts.password or parts.query:
        raise UserError(
            f"{flag} must not carry credentials or a query string (it is stored with the run); "
            f"put the key in {' or '.join(KEY_VARIABLES.values())} instead."
        )


def scrub(text: str) -> str:
    """``text`` with every key read by this process replaced by [redacted]."""
    return redact(text)
