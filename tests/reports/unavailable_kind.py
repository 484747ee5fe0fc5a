"""A report kind whose evidence has no models: how the registry answers for one."""

KIND = "runs"
LABEL = "unavailable (test)"


def unavailable_reason() -> str:
    return "its evidence has no models yet (test)"
