"""Typed, versioned JSON records: dataclasses checked field by field on every read.

Why not pydantic: importing it and building the models costs about 110 ms on this machine
kind, more than `list` may take in all (docs/adr/0002-records-without-pydantic.md). The
records are small flat objects, so a checker of the few types they use gives the same
guarantees: every field typed, the version known, a clear error that names the file.
"""

from __future__ import annotations

import dataclasses
import functools
import enum
import json
import math
import types
import typing
from typing import Any, ClassVar, Literal, Self, get_args, get_origin


class RecordError(ValueError):
    """A record that does not parse or does not match its schema."""


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON: a record holding one is invalid, not a number."""
    raise ValueError(f"{name} is not a JSON number")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_NO_DEFAULT = dataclasses.MISSING


class Record:
    """Base of every record: a frozen dataclass whose JSON keys are the camelCase field names.

    Subclasses are declared with `@dataclass(frozen=True)`.

    Subclasses set `VERSION` when they are a file of their own; nested records leave it None.
    Unknown keys are ignored so that a newer writer of the same version can add optional
    fields; an unknown version is an error.
    """

    VERSION: ClassVar[int | None] = None

    @classmethod
    def _schema(cls) -> tuple[tuple[str, str, Any, bool], ...]:
        cached = cls.__dict__.get("_fields_cache")
        if cached is None:
            hints = typing.get_type_hints(cls)
            cached = tuple(
                (
                    f.name,
                    _camel(f.name),
                    hints[f.name],
                    f.default is _NO_DEFAULT and f.default_factory is _NO_DEFAULT,
                )
                for f in dataclasses.fields(cls)  # type: ignore[arg-type]
            )
            setattr(cls, "_fields_cache", cached)
        return cached

    @classmethod
    def from_obj(cls, obj: Any, where: str = "") -> Self:
        where = where or cls.__name__
        if not isinstance(obj, dict):
            raise RecordError(f"{where}: expected an object, got {_kind(obj)}")
        if cls.VERSION is not None:
            version = obj.get("version")
            if version != cls.VERSION:
                raise RecordError(
                    f"{where}: unsupported version {version!r} (this agent-tty reads version {cls.VERSION})"
                )
        values: dict[str, Any] = {}
        for name, key, hint, required in cls._schema():
            if key not in obj:
                if required:
                    raise RecordError(f"{where}: missing field {key!r}")
                continue
            values[name] = _check(obj[key], hint, f"{where}.{key}")
        return cls(**values)

    @classmethod
    def from_json(cls, text: str | bytes, where: str = "") -> Self:
        try:
            obj = json.loads(text, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError) as err:
            raise RecordError(f"{where or cls.__name__}: not valid JSON ({err})") from None
        return cls.from_obj(obj, where)

    def to_obj(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key, _hint, _required in self._schema():
            out[key] = _dump(getattr(self, name))
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_obj(), separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


def _dump(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_obj()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


@functools.cache
def _shape(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    """A hint's origin and arguments: typing computes them anew on each call, and a long-lived
    client reads a manifest on every call (about half of a Python API call's own time)."""
    return get_origin(hint), get_args(hint)


def _check(value: Any, hint: Any, where: str) -> Any:
    origin, args = _shape(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in args:
            try:
                return _check(value, option, where)
            except RecordError as err:
                errors.append(str(err))
        raise RecordError(f"{where}: {_kind(value)} matches none of {hint}")
    if origin is Literal:
        if value in args and type(value) in {type(a) for a in args}:
            return value
        raise RecordError(f"{where}: {value!r} is not one of {list(args)}")
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list, got {_kind(value)}")
        (item,) = args[:1]
        return tuple(_check(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise RecordError(f"{where}: expected an object, got {_kind(value)}")
        _key, item = args
        return {str(k): _check(v, item, f"{where}.{k}") for k, v in value.items()}
    if hint is type(None):
        if value is None:
            return None
        raise RecordError(f"{where}: expected null, got {_kind(value)}")
    if hint is Any:
        return value
    if isinstance(hint, type):
        if issubclass(hint, Record):
            return hint.from_obj(value, where)
        if issubclass(hint, enum.Enum):
            try:
                return hint(value)
            except ValueError:
                raise RecordError(f"{where}: {value!r} is not a known {hint.__name__}") from None
        if hint is bool:
            if isinstance(value, bool):
                return value
        elif hint is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif hint is float:
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                return float(value)
        elif isinstance(value, hint):
            return value
        raise RecordError(f"{where}: expected {hint.__name__}, got {_kind(value)}")
    raise TypeError(f"unsupported record type {hint!r} at {where}")
