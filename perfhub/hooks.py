"""Named slots a lower layer calls and an app above it fills (docs/architecture.md, "Layers").

An app may import only what stands below it. When a lower app needs something only a higher
one knows (a run page showing the run against its hardware's limits, a metrics upload filed
as baseline runs), the lower app declares a ``Hook`` and calls it; the higher app provides the
implementation from its ``AppConfig.ready``. Without a provider the hook returns its fallback
or, with none, says which hook is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class HookMissing(LookupError):
    """Called a hook that no installed app provides and that has no fallback."""


class Hook(Generic[F]):
    def __init__(self, name: str, *, fallback: F | None = None) -> None:
        self.name = name
        self._fallback = fallback
        self._impl: F | None = None

    def provide(self, impl: F) -> None:
        """Set the implementation (the last app to provide it wins, as Django's ready order)."""
        self._impl = impl

    @property
    def provided(self) -> bool:
        return self._impl is not None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        impl = self._impl or self._fallback
        if impl is None:
            raise HookMissing(f"no installed app provides the hook {self.name!r}")
        return impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<Hook {self.name} {'provided' if self.provided else 'not provided'}>"
