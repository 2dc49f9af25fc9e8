"""Frozen value classes that cost nothing to define: what `@dataclass(frozen=True, slots=True)` gives.

A dataclass is made at import by generating and compiling its methods, and `import dataclasses`
pulls in inspect, ast, dis and tokenize: 5-10 ms of every command's start-up for a handful of small
classes on the hot path (issue 26). A subclass of `Frozen` names its fields in `__slots__` and
gets, from these few generic methods, what the code relied on: keyword or positional
construction (every field required), equality and hashing by value (only with its own class),
the dataclass repr, `replace(**changes)`, and no assignment after construction. Trailing fields
may have defaults, named in the class's `DEFAULTS` (a `Default(factory)` makes a fresh value per
instance, as dataclasses' `field(default_factory=...)`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every command ~2 ms
    from typing import Any, Self


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance (as dataclasses names it)."""


class ByValue:
    """Equality, hashing and the dataclass repr by a class's field values, and no assignment
    after construction: what Frozen and the records (storage/schema.py) share."""

    __slots__ = ()

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        raise NotImplementedError

    def _values(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined, no-any-return]
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self.field_names(), self._values()))
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Default:
    """A default made anew for each instance: `DEFAULTS = {"details": Default(dict)}`."""

    __slots__ = ("make",)

    def __init__(self, make: Any) -> None:
        self.make = make


class Frozen(ByValue):
    __slots__: tuple[str, ...] = ()
    DEFAULTS: dict[str, Any] = {}
    """Defaults of trailing fields, by name; a Default(factory) is called per instance."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = type(self).__slots__
        if not kwargs and len(args) == len(fields):  # every field by position: nothing to check
            for name, value in zip(fields, args):
                object.__setattr__(self, name, value)
            return
        if not args and len(kwargs) == len(fields) and all(name in kwargs for name in fields):
            for name in fields:  # every field by name, in the fields' order
                object.__setattr__(self, name, kwargs[name])
            return
        if len(args) > len(fields):
            raise TypeError(
                f"{type(self).__qualname__}.__init__() takes {len(fields) + 1} positional arguments but {len(args) + 1} were given"
            )
        values = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields:
                raise TypeError(f"{type(self).__qualname__}.__init__() got an unexpected keyword argument {name!r}")
            if name in values:
                raise TypeError(f"{type(self).__qualname__}.__init__() got multiple values for argument {name!r}")
            values[name] = value
        if len(values) < len(fields):
            defaults = type(self).DEFAULTS
            for name in fields:
                if name not in values and name in defaults:
                    default = defaults[name]
                    values[name] = default.make() if isinstance(default, Default) else default
            if len(values) < len(fields):
                missing_arguments(type(self), [name for name in fields if name not in values])
        for name in fields:
            object.__setattr__(self, name, values[name])

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return cls.__slots__

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in type(self).__slots__)

    def __reduce__(self) -> tuple[type[Self], tuple[Any, ...]]:
        # copy and pickle rebuild through __init__: their default sets each slot with setattr,
        # which a frozen class refuses (a frozen slots dataclass has its own __setstate__).
        return type(self), self._values()

    def replace(self, **changes: Any) -> Self:
        return type(self)(**{**{name: getattr(self, name) for name in type(self).__slots__}, **changes})


def missing_arguments(cls: type, missing: list[str]) -> None:
    """The TypeError a generated __init__ raises for arguments not given, word for word."""
    quoted = [repr(name) for name in missing]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} and {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    plural = "argument" if len(quoted) == 1 else "arguments"
    raise TypeError(f"{cls.__qualname__}.__init__() missing {len(quoted)} required positional {plural}: {listed}")
